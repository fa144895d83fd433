// Types for the test-only Prometheus text parser.
declare module 'parse-prometheus-text-format' {
  interface MetricFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Array<Record<string, unknown>>;
  }
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
