// A Micrometer Timer as the Prometheus registry publishes it: a count, a total time and a
// maximum over a sliding window, rendered as a summary and a `_max` gauge.

import java.util.Arrays;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Count and total of recorded durations, and their maximum over the last minute or so.
 *
 * <p>The maximum is Micrometer's TimeWindowMax with the Prometheus registry's defaults (step 60 s,
 * buffer length 3): a sample is written into all three buckets, the current bucket is read, and
 * every 20 s the current bucket is cleared and the next becomes current. A sample therefore stays
 * visible for 40 to 60 s after it was recorded, then `_max` falls back to 0.
 */
final class Timer {
  private static final int BUFFER_LENGTH = 3;
  private static final long ROTATE_EVERY_MS = 60_000 / BUFFER_LENGTH;

  private final LongSupplier clockMs;
  private final long[] maxNanos = new long[BUFFER_LENGTH];
  private int current;
  private long lastRotateMs;
  private long count;
  private long totalNanos;

  /** A timer on the wall clock. */
  Timer() {
    this(System::currentTimeMillis);
  }

  /** A timer on the given clock, epoch ms: the window's rotation is the only use of time. */
  Timer(LongSupplier clockMs) {
    this.clockMs = clockMs;
    this.lastRotateMs = clockMs.getAsLong();
  }

  /** Records one duration, ns; a negative one (a clock step) is ignored, as Micrometer does. */
  synchronized void record(long nanos) {
    if (nanos < 0) return;
    rotate();
    count++;
    totalNanos += nanos;
    for (int i = 0; i < BUFFER_LENGTH; i++) maxNanos[i] = Math.max(maxNanos[i], nanos);
  }

  /** Adds `{name}_count`, `{name}_sum` (seconds) and the `{name}_max` gauge (seconds). */
  void collect(PrometheusText scrape, String name, String help, Map<String, String> labels) {
    long seen;
    long total;
    long max;
    synchronized (this) {
      rotate();
      seen = count;
      total = totalNanos;
      max = maxNanos[current];
    }
    scrape.summary(name, help, labels, seen, total / 1e9);
    scrape.gauge(name + "_max", help, labels, max / 1e9);
  }

  private void rotate() {
    long now = clockMs.getAsLong();
    long since = now - lastRotateMs;
    if (since < ROTATE_EVERY_MS) return;
    if (since >= ROTATE_EVERY_MS * BUFFER_LENGTH) {
      // Idle for a whole window: nothing recorded is still within it.
      Arrays.fill(maxNanos, 0);
      current = 0;
      lastRotateMs = now - since % ROTATE_EVERY_MS;
      return;
    }
    while (since >= ROTATE_EVERY_MS) {
      maxNanos[current] = 0;
      current = (current + 1) % BUFFER_LENGTH;
      since -= ROTATE_EVERY_MS;
      lastRotateMs += ROTATE_EVERY_MS;
    }
  }
}
