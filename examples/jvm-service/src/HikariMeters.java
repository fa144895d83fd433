// HikariCP's pool under the meter names of HikariCP's own MicrometerMetricsTracker
// (com.zaxxer.hikari.metrics.micrometer, the same in 2.7.9 and today): timings through
// HikariCP's metrics hook, the pool's figures from its MXBean.

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import com.zaxxer.hikari.metrics.IMetricsTracker;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import com.zaxxer.hikari.metrics.PoolStats;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * The `hikaricp_connections*` families with the tag {@code pool}. Give it to
 * {@code HikariConfig.setMetricsTrackerFactory} before the pool starts, then {@link #attach}
 * the data source.
 *
 * <p>One difference from Micrometer: its gauges read HikariCP's PoolStats, which refreshes at
 * most once a second; these read the MXBean, which is live. A scrape a second apart sees the
 * same figures either way.
 */
final class HikariMeters implements MetricsTrackerFactory {
  private static final String PREFIX = "hikaricp_connections";

  private final Timer acquire = new Timer();
  private final Timer usage = new Timer();
  private final Timer creation = new Timer();
  private final LongAdder timeouts = new LongAdder();
  private volatile String poolName = "unknown";
  private volatile HikariDataSource dataSource;

  /** Called by HikariCP once, while the pool is built. */
  @Override
  public IMetricsTracker create(String poolName, PoolStats poolStats) {
    this.poolName = poolName;
    return new IMetricsTracker() {
      @Override
      public void recordConnectionCreatedMillis(long connectionCreatedMillis) {
        creation.record(connectionCreatedMillis * 1_000_000L);
      }

      @Override
      public void recordConnectionAcquiredNanos(long elapsedAcquiredNanos) {
        acquire.record(elapsedAcquiredNanos);
      }

      @Override
      public void recordConnectionUsageMillis(long elapsedBorrowedMillis) {
        usage.record(elapsedBorrowedMillis * 1_000_000L);
      }

      @Override
      public void recordConnectionTimeout() {
        timeouts.increment();
      }
    };
  }

  /** The started data source whose MXBean and configuration the gauges read. */
  void attach(HikariDataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** Adds the pool's families; before {@link #attach} only the timings are there. */
  void collect(PrometheusText scrape) {
    Map<String, String> pool = Map.of("pool", poolName);
    // Descriptions as MicrometerMetricsTracker gives them.
    acquire.collect(scrape, PREFIX + "_acquire_seconds", "Connection acquire time", pool);
    creation.collect(scrape, PREFIX + "_creation_seconds", "Connection creation time", pool);
    usage.collect(scrape, PREFIX + "_usage_seconds", "Connection usage time", pool);
    scrape.counter(PREFIX + "_timeout", "Connection timeout total count", pool, timeouts.sum());
    HikariDataSource source = dataSource;
    if (source == null) return;
    HikariPoolMXBean bean = source.getHikariPoolMXBean();
    if (bean == null) return;
    scrape.gauge(PREFIX, "Total connections", pool, bean.getTotalConnections());
    scrape.gauge(PREFIX + "_idle", "Idle connections", pool, bean.getIdleConnections());
    scrape.gauge(PREFIX + "_active", "Active connections", pool, bean.getActiveConnections());
    scrape.gauge(PREFIX + "_pending", "Pending threads", pool, bean.getThreadsAwaitingConnection());
    scrape.gauge(PREFIX + "_max", "Max connections", pool, source.getMaximumPoolSize());
    scrape.gauge(PREFIX + "_min", "Min connections", pool, source.getMinimumIdle());
  }
}
