// The service's own view of its requests, as Spring Boot 3 publishes it:
// `http_server_requests_seconds` with the tags error, exception, method, outcome, status, uri.

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One Timer per (method, uri, status). As in Spring MVC, the time starts when a request thread
 * takes the request up, so the time spent queued for a thread is not in it: that wait shows
 * only in `executor_queued_tasks`. Spring registers the timer without a description, which
 * its registry renders as a HELP of one space.
 */
final class HttpServerMeters {
  private final Map<Map<String, String>, Timer> timers = new ConcurrentHashMap<>();

  /** Records one answered request. */
  void record(String method, String uri, int status, long nanos) {
    String outcome = status < 200 ? "INFORMATIONAL"
        : status < 300 ? "SUCCESS"
        : status < 400 ? "REDIRECTION"
        : status < 500 ? "CLIENT_ERROR" : "SERVER_ERROR";
    Map<String, String> tags = Map.of("error", "none", "exception", "none", "method", method, "outcome", outcome,
        "status", Integer.toString(status), "uri", uri);
    timers.computeIfAbsent(tags, t -> new Timer()).record(nanos);
  }

  void collect(PrometheusText scrape) {
    timers.forEach((tags, timer) -> timer.collect(scrape, "http_server_requests_seconds", " ", tags));
  }
}
