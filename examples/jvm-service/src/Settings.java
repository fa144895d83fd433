// The service's settings, from the environment: defaults in one place, every problem
// reported at once.

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * @param port            PORT: the port on 127.0.0.1, 0 for any free one (default 8080)
 * @param threads         THREADS: request threads (default 8)
 * @param queueMax        QUEUE_MAX: requests allowed to wait for a thread; null, the default, is
 *                        unbounded (a LinkedBlockingQueue); 0 is a hand-off with no waiting
 * @param poolMax         POOL_MAX: HikariCP's maximumPoolSize (default 4)
 * @param acquireTimeoutMs ACQUIRE_TIMEOUT_MS: HikariCP's connectionTimeout, ms (default 30000;
 *                        HikariCP refuses less than 250)
 * @param queryMs         QUERY_MS: how long each request's query holds its connection, ms (default 50)
 * @param cpuMs           CPU_MS: CPU time each request burns on its thread after the query, ms (default 0)
 * @param jdbcUrl         from DATABASE_URL, a postgres:// URL
 */
record Settings(
    int port,
    int threads,
    Integer queueMax,
    int poolMax,
    int acquireTimeoutMs,
    int queryMs,
    int cpuMs,
    String jdbcUrl,
    String user,
    String password) {

  /** Thrown with every problem found, one per line, each saying what would be accepted. */
  static final class Invalid extends Exception {
    private static final long serialVersionUID = 1L;

    Invalid(List<String> problems) {
      super("orders-service: bad settings:\n  " + String.join("\n  ", problems));
    }
  }

  /** Reads the settings from {@code env}; unset and empty mean the default. */
  static Settings fromEnv(Map<String, String> env) throws Invalid {
    List<String> problems = new ArrayList<>();
    int port = whole(env, "PORT", 8080, 0, 65_535, problems);
    int threads = whole(env, "THREADS", 8, 1, 1_000, problems);
    Integer queueMax = isSet(env, "QUEUE_MAX") ? whole(env, "QUEUE_MAX", 0, 0, 1_000_000, problems) : null;
    int poolMax = whole(env, "POOL_MAX", 4, 1, 1_000, problems);
    int acquireTimeoutMs = whole(env, "ACQUIRE_TIMEOUT_MS", 30_000, 250, 600_000, problems);
    int queryMs = whole(env, "QUERY_MS", 50, 0, 600_000, problems);
    int cpuMs = whole(env, "CPU_MS", 0, 0, 10_000, problems);
    String[] jdbc = {null, null, null};
    String databaseUrl = env.get("DATABASE_URL");
    if (databaseUrl == null || databaseUrl.isBlank()) {
      problems.add("DATABASE_URL is not set: give a postgres://user:password@host:port/database URL");
    } else {
      try {
        jdbc = toJdbc(databaseUrl);
      } catch (IllegalArgumentException e) {
        problems.add("DATABASE_URL " + e.getMessage());
      }
    }
    if (!problems.isEmpty()) throw new Invalid(problems);
    return new Settings(port, threads, queueMax, poolMax, acquireTimeoutMs, queryMs, cpuMs, jdbc[0], jdbc[1],
        jdbc[2]);
  }

  /**
   * postgres://user:password@host:port/database?options to a JDBC URL, user and password (the
   * credentials percent-decoded, as libpq does). The options, sslmode for one, pass through to
   * the driver.
   */
  static String[] toJdbc(String url) {
    URI uri;
    try {
      uri = new URI(url.trim());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("is not a URL (" + e.getReason() + ")");
    }
    if (!"postgres".equals(uri.getScheme()) && !"postgresql".equals(uri.getScheme())) {
      throw new IllegalArgumentException("must start with postgres:// or postgresql://");
    }
    if (uri.getHost() == null) {
      throw new IllegalArgumentException("has no host: a socket directory is not supported, give host:port");
    }
    // Kept percent-encoded: the driver decodes the database name itself.
    String database = uri.getRawPath() == null || uri.getRawPath().length() <= 1 ? "postgres"
        : uri.getRawPath().substring(1);
    String host = uri.getHost().contains(":") && !uri.getHost().startsWith("[") ? "[" + uri.getHost() + "]"
        : uri.getHost();
    String jdbcUrl = "jdbc:postgresql://" + host + ":" + (uri.getPort() == -1 ? 5432 : uri.getPort()) + "/"
        + database + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    String user = null;
    String password = null;
    String info = uri.getRawUserInfo();
    if (info != null) {
      int colon = info.indexOf(':');
      user = decode(colon < 0 ? info : info.substring(0, colon));
      password = colon < 0 ? null : decode(info.substring(colon + 1));
    }
    return new String[] {jdbcUrl, user, password};
  }

  /** The JDBC URL without credentials (it never holds any), for the log. */
  String describeDatabase() {
    return jdbcUrl + (user == null ? "" : " as " + user);
  }

  private static boolean isSet(Map<String, String> env, String name) {
    String value = env.get(name);
    return value != null && !value.isBlank();
  }

  private static int whole(Map<String, String> env, String name, int fallback, int min, int max,
      List<String> problems) {
    if (!isSet(env, name)) return fallback;
    String text = env.get(name).trim();
    try {
      int value = Integer.parseInt(text);
      if (value >= min && value <= max) return value;
    } catch (NumberFormatException e) {
      // Reported below with the accepted range.
    }
    problems.add(name + "=" + text + ": give a whole number from " + min + " to " + max);
    return fallback;
  }

  // Percent-decoding only: a '+' in a password is a plus, not a space.
  private static String decode(String text) {
    return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
  }
}
