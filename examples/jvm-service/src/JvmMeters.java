// The process's CPU, uptime, threads and memory under the names of Micrometer's
// ProcessorMetrics, UptimeMetrics, JvmThreadMetrics and JvmMemoryMetrics (micrometer-core).

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.RuntimeMXBean;
import java.util.Map;

/**
 * CPU as Micrometer gives it: `process_cpu_usage` and `system_cpu_usage` are the JVM's "recent
 * cpu usage", 0 to 1 of all the processors it may use, over the time since the previous read
 * (so, scraped once a second, over that second); `system_cpu_count` those processors;
 * `process_cpu_time_ns_total` the process's CPU time, ns (Micrometer 1.13 and later).
 */
final class JvmMeters {
  private final com.sun.management.OperatingSystemMXBean os =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private final RuntimeMXBean runtime = ManagementFactory.getRuntimeMXBean();

  /** Adds the families; a figure the platform does not give (a negative one) is left out, as Micrometer does. */
  void collect(PrometheusText scrape) {
    Map<String, String> none = Map.of();
    scrape.gauge("system_cpu_count", "The number of processors available to the Java virtual machine", none,
        Runtime.getRuntime().availableProcessors());
    double load = os.getSystemLoadAverage();
    if (load >= 0) {
      scrape.gauge("system_load_average_1m",
          "The sum of the number of runnable entities queued to available processors and the number "
              + "of runnable entities running on the available processors averaged over a period of time",
          none, load);
    }
    double systemCpu = os.getCpuLoad();
    if (systemCpu >= 0) {
      scrape.gauge("system_cpu_usage", "The \"recent cpu usage\" of the system the application is running in",
          none, systemCpu);
    }
    double processCpu = os.getProcessCpuLoad();
    if (processCpu >= 0) {
      scrape.gauge("process_cpu_usage", "The \"recent cpu usage\" for the Java Virtual Machine process", none,
          processCpu);
    }
    long cpuNanos = os.getProcessCpuTime();
    if (cpuNanos >= 0) {
      scrape.counter("process_cpu_time_ns", "The \"cpu time\" used by the Java Virtual Machine process", none,
          cpuNanos);
    }
    scrape.gauge("process_uptime_seconds", "The uptime of the Java virtual machine", none,
        runtime.getUptime() / 1000.0);
    scrape.gauge("process_start_time_seconds", "Start time of the process since unix epoch.", none,
        runtime.getStartTime() / 1000.0);
    scrape.gauge("jvm_threads_live_threads",
        "The current number of live threads including both daemon and non-daemon threads", none,
        ManagementFactory.getThreadMXBean().getThreadCount());
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      String area = pool.getType() == MemoryType.HEAP ? "heap" : "nonheap";
      scrape.gauge("jvm_memory_used_bytes", "The amount of used memory", Map.of("area", area, "id", pool.getName()),
          pool.getUsage().getUsed());
    }
  }
}
