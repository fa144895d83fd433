// k6's built-in metrics: names, types and what their values are (k6 metrics/builtin.go).
import type { MetricType, ValueKind } from './sinks.ts';

export const BUILTIN_METRICS = {
  vus: ['gauge', 'default'],
  vus_max: ['gauge', 'default'],
  iterations: ['counter', 'default'],
  iteration_duration: ['trend', 'time'],
  dropped_iterations: ['counter', 'default'],
  data_sent: ['counter', 'data'],
  data_received: ['counter', 'data'],
  checks: ['rate', 'default'],
  group_duration: ['trend', 'time'],
  http_reqs: ['counter', 'default'],
  http_req_duration: ['trend', 'time'],
  http_req_blocked: ['trend', 'time'],
  http_req_connecting: ['trend', 'time'],
  http_req_tls_handshaking: ['trend', 'time'],
  http_req_sending: ['trend', 'time'],
  http_req_waiting: ['trend', 'time'],
  http_req_receiving: ['trend', 'time'],
  http_req_failed: ['rate', 'default'],
  // plateau's own: the generator's health, so analysis can tell a generator limit.
  engine_lag_ms: ['gauge', 'time'],
  engine_cpu_pct: ['gauge', 'default'],
} as const satisfies Record<string, readonly [MetricType, ValueKind]>;

export type BuiltinMetricName = keyof typeof BUILTIN_METRICS;

/** The HTTP timing metrics, in the order k6 emits a request's samples. */
export const HTTP_TIMING_METRICS = [
  'http_req_duration',
  'http_req_blocked',
  'http_req_connecting',
  'http_req_tls_handshaking',
  'http_req_sending',
  'http_req_waiting',
  'http_req_receiving',
] as const;
