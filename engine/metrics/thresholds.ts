// k6 threshold expressions: parse once at start, evaluate every 2 s and at the end.
import type { ConfigProblem } from '../../contract/index.ts';
import { parseDurationNs } from '../config/duration.ts';
import { CounterSink, GaugeSink, type MetricType, RateSink, type TrendSink } from './sinks.ts';

/** Comparison operators, tried in this order (a substring cut, as k6 does). */
const OPERATORS = ['<=', '<', '>=', '>', '===', '==', '!='] as const;
type Operator = (typeof OPERATORS)[number];

/** Aggregations each metric type accepts. */
const AGGREGATIONS: Record<MetricType, RegExp> = {
  counter: /^(count|rate)$/,
  gauge: /^value$/,
  rate: /^rate$/,
  trend: /^(avg|min|max|med|p\(\d+(\.\d+)?\))$/,
};

/** One parsed threshold of a metric or sub-metric. */
export interface Threshold {
  /** The expression as written (`p(95)<250`). */
  source: string;
  aggregation: string;
  operator: Operator;
  bound: number;
  abortOnFail: boolean;
  /** Abort only once the test has run this long, ns. */
  delayAbortEvalNs: number;
  /** Raw delayAbortEval as written, for outputs that echo it (null when unset). */
  delayAbortEval: string | null;
  /** Result of the latest evaluation: true = crossed (failed). */
  failed: boolean;
}

/** The threshold config as a script writes it. */
export type ThresholdConfig = string | { threshold: string; abortOnFail?: boolean; delayAbortEval?: string };

/**
 * Parses one threshold for a metric of `type`. Returns the threshold, or a problem naming
 * the metric and what is accepted (k6 refuses these at start, exit 104).
 */
export function parseThreshold(
  metricName: string,
  type: MetricType,
  config: ThresholdConfig,
): Threshold | ConfigProblem {
  const source = typeof config === 'string' ? config : config?.threshold;
  const problem = (message: string, hint: string): ConfigProblem => ({
    setting: `thresholds["${metricName}"]`,
    message,
    hint,
  });
  if (typeof source !== 'string') {
    return problem('is not a string or {threshold, abortOnFail, delayAbortEval}', "write e.g. 'p(95)<250'");
  }
  const operator = OPERATORS.find((op) => source.includes(op));
  if (!operator) return problem(`"${source}" has no operator`, 'use one of <= < >= > == != , e.g. p(95)<250');
  const at = source.indexOf(operator);
  const aggregation = source.slice(0, at).trim();
  const boundText = source.slice(at + operator.length).trim();
  const bound = Number(boundText);
  if (boundText === '' || !Number.isFinite(bound)) {
    return problem(
      `"${source}" does not compare with a number`,
      'the right side is a plain number, e.g. rate<0.01',
    );
  }
  if (!AGGREGATIONS[type].test(aggregation)) {
    const accepted = {
      counter: 'count, rate',
      gauge: 'value',
      rate: 'rate',
      trend: 'avg, min, max, med, p(N)',
    }[type];
    return problem(`"${aggregation}" is not an aggregation of a ${type} metric`, `use ${accepted}`);
  }
  const percentile = /^p\((.+)\)$/.exec(aggregation);
  if (percentile && Number(percentile[1]) > 100) {
    return problem(`"${aggregation}" is out of range`, 'use p(N) with 0 <= N <= 100');
  }
  const delayText = typeof config === 'object' ? config.delayAbortEval : undefined;
  const delayNs = delayText === undefined ? 0 : parseDurationNs(delayText);
  if (delayNs === undefined)
    return problem(`delayAbortEval "${delayText}" is not a duration`, 'use e.g. 10s');
  return {
    source,
    aggregation,
    operator,
    bound,
    abortOnFail: typeof config === 'object' && config.abortOnFail === true,
    delayAbortEvalNs: delayNs,
    delayAbortEval: delayText ?? null,
    failed: false,
  };
}

/**
 * The value of `aggregation` over a sink; undefined when the sink has no such value
 * (an empty Rate has no `rate`, which counts as a pass). `elapsedSeconds` is the test
 * time so far, for a Counter's `rate`.
 */
export function aggregate(
  sink: CounterSink | GaugeSink | RateSink | TrendSink,
  aggregation: string,
  elapsedSeconds: number,
): number | undefined {
  if (sink instanceof CounterSink) {
    if (aggregation === 'count') return sink.count;
    return elapsedSeconds > 0 ? sink.count / elapsedSeconds : 0;
  }
  if (sink instanceof GaugeSink) return sink.value;
  if (sink instanceof RateSink) return sink.isEmpty ? undefined : sink.rate;
  switch (aggregation) {
    case 'avg':
      return sink.avg;
    case 'min':
      return sink.min;
    case 'max':
      return sink.max;
    case 'med':
      return sink.med;
    default:
      return sink.percentile(Number(aggregation.slice(2, -1)));
  }
}

/** Whether `value op bound` holds (the threshold passes). */
export function holds(value: number, operator: Operator, bound: number): boolean {
  switch (operator) {
    case '<=':
      return value <= bound;
    case '<':
      return value < bound;
    case '>=':
      return value >= bound;
    case '>':
      return value > bound;
    case '===':
    case '==':
      return value === bound;
    case '!=':
      return value !== bound;
  }
}

/**
 * Parses a sub-metric selector `name{k:v,k2:v2}`: pairs split on `,`, each at its first
 * `:` (so `group:::g` means group=`::g`), keys and values trimmed of spaces and quotes.
 * Returns undefined for a plain metric name.
 */
export function parseSelector(
  text: string,
): { metric: string; suffix: string; tags: [string, string][] } | undefined | ConfigProblem {
  const open = text.indexOf('{');
  if (open < 0) return undefined;
  const problem = {
    setting: `thresholds["${text}"]`,
    message: 'is not a valid sub-metric selector',
    hint: 'write metric{tag:value,tag2:value2}, e.g. http_req_duration{step:r020}',
  };
  if (!text.endsWith('}')) return problem;
  const metric = text.slice(0, open).trim();
  const inner = text.slice(open + 1, -1);
  const tags: [string, string][] = [];
  for (const pair of inner.split(',')) {
    const colon = pair.indexOf(':');
    if (colon < 0) return problem;
    const clean = (s: string) => s.trim().replace(/^["']+|["']+$/g, '');
    const key = clean(pair.slice(0, colon));
    if (key === '') return problem;
    tags.push([key, clean(pair.slice(colon + 1))]);
  }
  return { metric, suffix: tags.map(([k, v]) => `${k}:${v}`).join(','), tags };
}
