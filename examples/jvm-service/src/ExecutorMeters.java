// A ThreadPoolExecutor under the meter names of Micrometer's ExecutorServiceMetrics
// (micrometer-core, binder/jvm/ExecutorServiceMetrics.java, monitor(ThreadPoolExecutor)).

import java.util.Map;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * The `executor_*` families of one executor, tagged {@code name}. As in Micrometer,
 * `executor_queue_remaining_tasks` is published for every queue: an unbounded
 * LinkedBlockingQueue reports Integer.MAX_VALUE less its depth (2.147483647E9 when empty), so
 * a reader tells an unbounded queue by that figure, not by the series being absent.
 */
final class ExecutorMeters {
  private final ThreadPoolExecutor executor;
  private final Map<String, String> tags;

  ExecutorMeters(ThreadPoolExecutor executor, String name) {
    this.executor = executor;
    this.tags = Map.of("name", name);
  }

  /** Adds the executor's seven families; each figure is read once, without stopping the pool. */
  void collect(PrometheusText scrape) {
    scrape.counter("executor_completed_tasks",
        "The approximate total number of tasks that have completed execution", tags,
        executor.getCompletedTaskCount());
    scrape.gauge("executor_active_threads",
        "The approximate number of threads that are actively executing tasks", tags,
        executor.getActiveCount());
    scrape.gauge("executor_queued_tasks", "The approximate number of tasks that are queued for execution",
        tags, executor.getQueue().size());
    scrape.gauge("executor_queue_remaining_tasks",
        "The number of additional elements that this queue can ideally accept without blocking", tags,
        executor.getQueue().remainingCapacity());
    scrape.gauge("executor_pool_size_threads", "The current number of threads in the pool", tags,
        executor.getPoolSize());
    scrape.gauge("executor_pool_core_threads", "The core number of threads for the pool", tags,
        executor.getCorePoolSize());
    scrape.gauge("executor_pool_max_threads", "The maximum allowed number of threads in the pool", tags,
        executor.getMaximumPoolSize());
  }
}
