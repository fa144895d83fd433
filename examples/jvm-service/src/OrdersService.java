// A small orders API that plateau did not write, for studying "any service": the JDK's HTTP
// server handing requests to a pool of request threads, HikariCP in front of PostgreSQL, and
// its meters at /actuator/prometheus under the names Micrometer gives them in a Spring Boot
// service. Settings and how plateau studies it: ../README.md.

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * GET /orders?account=N borrows a connection (waiting up to ACQUIRE_TIMEOUT_MS, else 503
 * {"error":"overloaded","reason":"timeout"}), holds it for a QUERY_MS pg_sleep, gives it back,
 * burns CPU_MS of CPU and answers 200. A request that finds every request thread busy and the
 * queue (QUEUE_MAX) full is refused with 503 reason "queue". GET /healthz answers 200.
 *
 * <p>The HTTP server's own dispatcher thread only reads each request and hands it on: /orders to
 * the request threads, /actuator/prometheus and /healthz to one management thread of their own,
 * so a scrape is answered while every request thread is busy, as on Spring's management port.
 */
public final class OrdersService {
  private static final String RETRY_AFTER_SECONDS = "1";
  private static final String JSON = "application/json";

  private final Settings settings;
  private final HikariMeters hikariMeters = new HikariMeters();
  private final HttpServerMeters httpMeters = new HttpServerMeters();
  private final JvmMeters jvmMeters = new JvmMeters();
  private final ThreadPoolExecutor requestThreads;
  private final ExecutorMeters requestThreadMeters;
  private final ExecutorService managementThread = Executors.newSingleThreadExecutor(named("management-"));
  private final ThreadMXBean threadBean = ManagementFactory.getThreadMXBean();
  private final HikariDataSource dataSource;

  /** What a handler answers. */
  private record Response(int status, String contentType, String body, Map<String, String> headers) {
    static Response json(int status, String body) {
      return new Response(status, JSON, body, Map.of());
    }
  }

  private interface Handler {
    Response handle(HttpExchange exchange) throws IOException;
  }

  /** Opens the pool (one connection at once, so a wrong DATABASE_URL fails here) and the request threads. */
  OrdersService(Settings settings) {
    this.settings = settings;
    BlockingQueue<Runnable> queue = settings.queueMax() == null ? new LinkedBlockingQueue<>()
        : settings.queueMax() == 0 ? new SynchronousQueue<>()
        : new ArrayBlockingQueue<>(settings.queueMax());
    // A fixed pool, as Tomcat's request threads are in effect: threads start as requests come,
    // up to THREADS; past that requests queue, and past QUEUE_MAX AbortPolicy refuses them.
    requestThreads = new ThreadPoolExecutor(settings.threads(), settings.threads(), 60, TimeUnit.SECONDS, queue,
        named("http-"), new ThreadPoolExecutor.AbortPolicy());
    requestThreadMeters = new ExecutorMeters(requestThreads, "http");

    HikariConfig config = new HikariConfig();
    config.setPoolName("orders");
    config.setJdbcUrl(settings.jdbcUrl());
    if (settings.user() != null) config.setUsername(settings.user());
    if (settings.password() != null) config.setPassword(settings.password());
    config.setMaximumPoolSize(settings.poolMax());
    config.setConnectionTimeout(settings.acquireTimeoutMs());
    // HikariCP wants the validation timeout no longer than the acquire timeout.
    config.setValidationTimeout(Math.min(5_000, settings.acquireTimeoutMs()));
    // Names the backends in pg_stat_activity, so the database's side can be told apart.
    config.addDataSourceProperty("ApplicationName", "orders-service");
    config.setMetricsTrackerFactory(hikariMeters);
    dataSource = new HikariDataSource(config);
    hikariMeters.attach(dataSource);
  }

  public static void main(String[] args) throws IOException {
    Settings settings;
    try {
      settings = Settings.fromEnv(System.getenv());
    } catch (Settings.Invalid e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    System.out.println("orders-service: THREADS=" + settings.threads() + " QUEUE_MAX="
        + (settings.queueMax() == null ? "unbounded" : settings.queueMax()) + " POOL_MAX=" + settings.poolMax()
        + " ACQUIRE_TIMEOUT_MS=" + settings.acquireTimeoutMs() + " QUERY_MS=" + settings.queryMs() + " CPU_MS="
        + settings.cpuMs() + " database " + settings.describeDatabase());
    OrdersService service;
    try {
      service = new OrdersService(settings);
    } catch (RuntimeException e) {
      System.err.println("orders-service: cannot open the pool to " + settings.describeDatabase() + ": "
          + rootMessage(e));
      System.exit(1);
      return;
    }
    int port = service.listen();
    Runtime.getRuntime().addShutdownHook(new Thread(service::close, "shutdown"));
    System.out.println("listening on http://127.0.0.1:" + port);
    System.out.flush();
  }

  /** Starts the HTTP server on 127.0.0.1 and returns its port. */
  int listen() throws IOException {
    // A backlog of 100, as Tomcat's acceptCount; the dispatcher accepts eagerly anyway.
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), settings.port()), 100);
    // No executor: the dispatcher thread runs each context's handler, and each one only hands
    // the exchange on, which is how one server gets an executor per context.
    server.setExecutor(null);
    server.createContext("/", exchange -> send(exchange, Response.json(404, "{\"error\":\"not found\"}")));
    server.createContext("/orders", exchange -> handOff(exchange, requestThreads, "/orders", this::orders));
    server.createContext("/actuator/prometheus",
        exchange -> handOff(exchange, managementThread, "/actuator/prometheus", this::prometheus));
    server.createContext("/healthz", exchange -> handOff(exchange, managementThread, "/healthz", this::health));
    server.start();
    return server.getAddress().getPort();
  }

  /**
   * Stops the threads and closes the pool, so PostgreSQL sees its backends leave. The HTTP
   * server is left to the JVM's exit: its stop() waits out the dispatcher's one-second select,
   * which would make every stop a second longer for nothing.
   */
  void close() {
    requestThreads.shutdownNow();
    managementThread.shutdownNow();
    dataSource.close();
  }

  private void handOff(HttpExchange exchange, Executor executor, String path,
      Handler handler) throws IOException {
    try {
      executor.execute(() -> answer(exchange, path, handler));
    } catch (RejectedExecutionException e) {
      send(exchange, overloaded("queue"));
    }
  }

  /** Runs a handler on the thread it was handed to, times it as Spring MVC would, and answers. */
  private void answer(HttpExchange exchange, String path, Handler handler) {
    long started = System.nanoTime();
    Response response;
    try {
      String method = exchange.getRequestMethod();
      if (!exchange.getRequestURI().getPath().equals(path)) {
        response = Response.json(404, "{\"error\":\"not found\"}");
      } else if (!method.equals("GET")) {
        response = new Response(405, JSON, "{\"error\":\"method not allowed\"}", Map.of("Allow", "GET"));
      } else {
        response = handler.handle(exchange);
      }
    } catch (Exception | Error e) {
      System.err.println("orders-service: " + path + " failed: " + e);
      response = Response.json(500, "{\"error\":\"internal\"}");
    }
    try {
      send(exchange, response);
    } catch (IOException e) {
      // The client went away; nothing to answer.
    }
    httpMeters.record(exchange.getRequestMethod(), path, response.status(), System.nanoTime() - started);
  }

  private Response orders(HttpExchange exchange) {
    Integer account = account(exchange.getRequestURI().getRawQuery());
    if (account == null) {
      return Response.json(400, "{\"error\":\"bad request\",\"reason\":\"account must be a whole number\"}");
    }
    try (Connection connection = dataSource.getConnection();
        PreparedStatement statement = connection.prepareStatement("select pg_sleep(?)")) {
      statement.setDouble(1, settings.queryMs() / 1000.0);
      statement.execute();
    } catch (SQLTransientConnectionException e) {
      // HikariCP's "Connection is not available, request timed out after …ms".
      return overloaded("timeout");
    } catch (SQLException e) {
      System.err.println("orders-service: query failed: " + e.getMessage());
      return Response.json(500, "{\"error\":\"database\"}");
    }
    burnCpu(settings.cpuMs());
    return Response.json(200, "{\"account\":" + account + ",\"orders\":[]}");
  }

  private Response prometheus(HttpExchange exchange) {
    PrometheusText scrape = new PrometheusText();
    hikariMeters.collect(scrape);
    requestThreadMeters.collect(scrape);
    jvmMeters.collect(scrape);
    httpMeters.collect(scrape);
    return new Response(200, PrometheusText.CONTENT_TYPE, scrape.render(), Map.of());
  }

  private Response health(HttpExchange exchange) {
    return Response.json(200, "{\"status\":\"UP\"}");
  }

  private static Response overloaded(String reason) {
    return new Response(503, JSON, "{\"error\":\"overloaded\",\"reason\":\"" + reason + "\"}",
        Map.of("Retry-After", RETRY_AFTER_SECONDS));
  }

  /** The account from the query string: 1 when absent, null when it is not a whole number. */
  static Integer account(String rawQuery) {
    if (rawQuery == null) return 1;
    for (String pair : rawQuery.split("&")) {
      if (!pair.startsWith("account=")) continue;
      String text = pair.substring("account=".length());
      return text.matches("\\d{1,9}") ? Integer.valueOf(text) : null;
    }
    return 1;
  }

  /**
   * Spends {@code ms} of this thread's CPU time (not wall time: with more busy threads than
   * cores a wall-clock loop would cost less CPU the busier the machine, and CPU would never be
   * the limit). Falls back to wall time where the JVM cannot measure thread CPU time.
   */
  private void burnCpu(int ms) {
    if (ms <= 0) return;
    boolean cpuClock = threadBean.isCurrentThreadCpuTimeSupported();
    long start = cpuClock ? threadBean.getCurrentThreadCpuTime() : System.nanoTime();
    long end = start + ms * 1_000_000L;
    long x = 0;
    while ((cpuClock ? threadBean.getCurrentThreadCpuTime() : System.nanoTime()) < end) {
      for (int i = 0; i < 1_000; i++) x = (x * 31 + 7) % 1_000_003;
    }
    if (x < 0) throw new IllegalStateException("unreachable");
  }

  private static void send(HttpExchange exchange, Response response) throws IOException {
    byte[] body = response.body().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", response.contentType());
    response.headers().forEach(exchange.getResponseHeaders()::set);
    try (exchange) {
      exchange.sendResponseHeaders(response.status(), body.length == 0 ? -1 : body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  private static ThreadFactory named(String prefix) {
    AtomicInteger next = new AtomicInteger(1);
    return runnable -> new Thread(runnable, prefix + next.getAndIncrement());
  }

  private static String rootMessage(Throwable error) {
    Throwable root = error;
    while (root.getCause() != null && root.getCause() != root) root = root.getCause();
    return root.getMessage() == null ? root.toString() : root.getMessage();
  }
}
