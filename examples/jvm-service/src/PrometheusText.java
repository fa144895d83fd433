// Prometheus text format 0.0.4, written the way Micrometer 1.13+ writes it through the
// Prometheus Java client 1.x (PrometheusTextFormatWriter, TextFormatUtil), so that a parser
// tested on this service reads a real Spring Boot 3.3+ `/actuator/prometheus`.

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One scrape's families, collected then rendered. The details copied from the Java client:
 * families sorted by their name (a counter's without `_total`); `# HELP` then `# TYPE`; a
 * counter's HELP, TYPE and sample all named with `_total`; a summary's `_count` as a whole
 * number and `_sum` as a double; every other value as Java's {@code Double.toString}
 * ({@code 4.0}, {@code 2.147483647E9}, {@code +Inf}); labels in key order (Micrometer sorts a
 * meter's tags) with no trailing comma (the 0.x simpleclient, Micrometer up to 1.12, wrote one).
 */
final class PrometheusText {
  /** The content type Micrometer's endpoint answers with for text 0.0.4. */
  static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  private enum Type {
    GAUGE("gauge"),
    COUNTER("counter"),
    SUMMARY("summary");

    final String word;

    Type(String word) {
      this.word = word;
    }
  }

  private record Sample(String suffix, SortedMap<String, String> labels, String value) {}

  private record Family(String name, String help, Type type, List<Sample> samples) {}

  private final TreeMap<String, Family> families = new TreeMap<>();

  /** Adds one series of a gauge family; a family added twice gathers both series. */
  void gauge(String name, String help, Map<String, String> labels, double value) {
    family(name, help, Type.GAUGE).samples.add(new Sample("", new TreeMap<>(labels), number(value)));
  }

  /** Adds one series of a counter; {@code name} is without {@code _total}, as Micrometer names it. */
  void counter(String name, String help, Map<String, String> labels, double value) {
    family(name, help, Type.COUNTER).samples.add(new Sample("_total", new TreeMap<>(labels), number(value)));
  }

  /** Adds a summary's {@code _count} and {@code _sum} (a Micrometer Timer without percentiles). */
  void summary(String name, String help, Map<String, String> labels, long count, double sum) {
    Family family = family(name, help, Type.SUMMARY);
    family.samples.add(new Sample("_count", new TreeMap<>(labels), Long.toString(count)));
    family.samples.add(new Sample("_sum", new TreeMap<>(labels), number(sum)));
  }

  /** The scrape's body. */
  String render() {
    StringBuilder out = new StringBuilder(8192);
    for (Family family : families.values()) {
      String shown = family.type == Type.COUNTER ? family.name + "_total" : family.name;
      if (!family.help.isEmpty()) {
        out.append("# HELP ").append(shown).append(' ').append(escapeHelp(family.help)).append('\n');
      }
      out.append("# TYPE ").append(shown).append(' ').append(family.type.word).append('\n');
      for (Sample sample : family.samples) {
        out.append(family.name).append(sample.suffix);
        if (!sample.labels.isEmpty()) {
          out.append('{');
          boolean first = true;
          for (Map.Entry<String, String> label : sample.labels.entrySet()) {
            if (!first) out.append(',');
            first = false;
            out.append(label.getKey()).append("=\"").append(escapeLabel(label.getValue())).append('"');
          }
          out.append('}');
        }
        out.append(' ').append(sample.value).append('\n');
      }
    }
    return out.toString();
  }

  private Family family(String name, String help, Type type) {
    Family family = families.computeIfAbsent(name, n -> new Family(n, help, type, new ArrayList<>()));
    if (family.type != type) {
      // Micrometer refuses a second meter of another type under the same name; so do we.
      throw new IllegalStateException(name + " is a " + family.type.word + ", not a " + type.word);
    }
    return family;
  }

  private static String number(double value) {
    if (value == Double.POSITIVE_INFINITY) return "+Inf";
    if (value == Double.NEGATIVE_INFINITY) return "-Inf";
    return Double.toString(value);
  }

  private static String escapeHelp(String text) {
    return text.replace("\\", "\\\\").replace("\n", "\\n");
  }

  private static String escapeLabel(String text) {
    return text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
