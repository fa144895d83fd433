// The end-of-test text summary in k6's layouts: v1's `compact` (thresholds, checks, metrics by
// category) and `full` (every metric, plus a section per scenario with its groups), and the
// pre-v1 `legacy` one (one alphabetical list, thresholds marked on their metric). Numbers
// are written as k6 writes them: durations truncated to two decimals in a unit that fits,
// bytes in powers of 1,000, rates truncated to hundredths of a percent.
import type { TestRuntime } from '../js/runtime.ts';
import { HTTP_TIMING_METRICS } from '../metrics/builtin.ts';
import { aggregate } from '../metrics/thresholds.ts';
import type { BreakdownBlock, ScenarioBreakdown } from './scenario-breakdown.ts';
import { type SummaryData, sinkValues } from './summary.ts';

export type TextSummaryMode = 'compact' | 'full' | 'legacy';

/** What the text summary is made from. */
export interface TextSummaryInput {
  mode: TextSummaryMode;
  data: SummaryData;
  /** Metric (or sub-metric) name → each of its thresholds' aggregation → its value. */
  thresholdValues: Record<string, Record<string, number>>;
  /** Full mode: each scenario's own results. */
  scenarios?: ReadonlyMap<string, BreakdownBlock>;
}

/** Gathers what the text summary needs beyond handleSummary's data. */
export function textSummaryInput(
  runtime: TestRuntime,
  data: SummaryData,
  mode: TextSummaryMode,
  breakdown?: ScenarioBreakdown,
): TextSummaryInput {
  const seconds = data.state.testRunDurationMs / 1000;
  const thresholdValues: TextSummaryInput['thresholdValues'] = {};
  for (const metric of runtime.registry.all()) {
    for (const m of [metric, ...metric.submetrics]) {
      if (m.thresholds.length === 0) continue;
      const byAggregation: Record<string, number> = {};
      for (const t of m.thresholds)
        byAggregation[t.aggregation] = aggregate(m.sink, t.aggregation, seconds) ?? 0;
      thresholdValues[m.name] = byAggregation;
    }
  }
  return { mode, data, thresholdValues, ...(breakdown ? { scenarios: breakdown.scenarios } : {}) };
}

/** The summary's text, ready for stdout. */
export function renderTextSummary(input: TextSummaryInput): string {
  return input.mode === 'legacy' ? renderLegacy(input) : renderV1(input);
}

/** A line of the metric table: a metric or sub-metric (`name{tag:value}`) and its values. */
interface Row {
  name: string;
  type: string;
  contains: string;
  values: Record<string, number>;
}

interface Format {
  trendStats: string[];
  timeUnit: string;
}

// ---------------------------------------------------------------- numbers, as k6 writes them

/** `val` with at most `digits` decimals and no trailing zeros. */
function trimmed(val: number, digits: number): string {
  return String(Number.parseFloat(val.toFixed(digits)));
}

/** `val` cut (not rounded) to `digits` decimals, no trailing zeros. */
function truncated(val: number, digits: number): string {
  const scale = 10 ** digits;
  return trimmed(Math.trunc(val * scale) / scale, digits);
}

const TIME_UNITS: Readonly<Record<string, { unit: string; perMs: number }>> = {
  s: { unit: 's', perMs: 0.001 },
  ms: { unit: 'ms', perMs: 1 },
  us: { unit: 'µs', perMs: 1000 },
};

/** A duration in ms: in `timeUnit` (two decimals) when set, else in the unit that fits it. */
export function formatDuration(ms: number, timeUnit = ''): string {
  const fixed = TIME_UNITS[timeUnit];
  if (fixed) return `${(ms * fixed.perMs).toFixed(2)}${fixed.unit}`;
  if (ms === 0) return '0s';
  if (ms < 0.001) return `${Math.trunc(ms * 1e6)}ns`;
  if (ms < 1) return `${truncated(ms * 1000, 2)}µs`;
  if (ms < 1000) return `${truncated(ms, 2)}ms`;
  let text = `${truncated((ms % 60_000) / 1000, ms > 60_000 ? 0 : 2)}s`;
  let rest = Math.trunc(ms / 60_000);
  if (rest < 1) return text;
  text = `${rest % 60}m${text}`;
  rest = Math.trunc(rest / 60);
  return rest < 1 ? text : `${rest}h${text}`;
}

const BYTE_UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];

/** Bytes in powers of 1,000: `718 B`, `4.9 kB`, `769 kB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 10) return `${bytes} B`;
  const power = Math.floor(Math.log(bytes) / Math.log(1000));
  const value = Math.floor((bytes / 1000 ** power) * 10 + 0.5) / 10;
  return `${value.toFixed(value < 10 ? 1 : 0)} ${BYTE_UNITS[power]}`;
}

function formatValue(value: number, row: Pick<Row, 'type' | 'contains'>, timeUnit: string): string {
  if (row.type === 'rate') return `${(Math.trunc(value * 10_000) / 100).toFixed(2)}%`;
  if (row.contains === 'data') return formatBytes(value);
  if (row.contains === 'time') return formatDuration(value, timeUnit);
  return trimmed(value, 6);
}

/** A non-trend metric's columns: its main value, then what follows it. */
function plainColumns(row: Row, timeUnit: string): string[] {
  const v = row.values;
  const f = (value: number | undefined) => formatValue(value ?? 0, row, timeUnit);
  switch (row.type) {
    case 'counter':
      return [f(v.count), `${f(v.rate)}/s`];
    case 'gauge':
      return [f(v.value), `min=${f(v.min)}`, `max=${f(v.max)}`];
    case 'rate':
      return [f(v.rate), `${v.passes ?? 0} out of ${(v.passes ?? 0) + (v.fails ?? 0)}`];
    default:
      return ['[no data]'];
  }
}

function trendColumns(row: Row, format: Format): string[] {
  return format.trendStats.map((stat) =>
    stat === 'count'
      ? String(row.values[stat] ?? 0)
      : formatValue(row.values[stat] ?? 0, row, format.timeUnit),
  );
}

// ---------------------------------------------------------------- the metric table

/** `name{tag:value}` → `{ tag:value }`, shown under its parent. */
function displayName(name: string): string {
  const brace = name.indexOf('{');
  return brace < 0 ? name : `{ ${name.slice(brace + 1, -1)} }`;
}

/** Extra indent of a sub-metric under its parent. */
function subIndent(name: string): string {
  return name.includes('{') ? '  ' : '';
}

/** Metric names in k6's order: by name, each sub-metric right after its parent. */
function byName(a: string, b: string): number {
  const parentA = a.split('{', 1)[0]!;
  const parentB = b.split('{', 1)[0]!;
  return parentA.localeCompare(parentB) || a.slice(parentA.length).localeCompare(b.slice(parentB.length));
}

/**
 * Lays out `rows` as k6 does: names dotted to one width, each trend statistic and each
 * plain value in a column as wide as its widest entry. Returns one line per row, each
 * after `prefix(row)` (indent, and legacy's threshold mark).
 */
function tableLines(rows: readonly Row[], format: Format, prefix: (row: Row) => string): string[] {
  const nameWidth = Math.max(0, ...rows.map((r) => subIndent(r.name).length + displayName(r.name).length));
  const trend = new Map<Row, string[]>();
  const plain = new Map<Row, string[]>();
  const trendWidths = format.trendStats.map(() => 0);
  let mainWidth = 0;
  const extraWidths: number[] = [];
  for (const row of rows) {
    if (row.type === 'trend') {
      const cols = trendColumns(row, format);
      cols.forEach((col, i) => {
        trendWidths[i] = Math.max(trendWidths[i]!, col.length);
      });
      trend.set(row, cols);
    } else {
      const [main = '', ...extras] = plainColumns(row, format.timeUnit);
      mainWidth = Math.max(mainWidth, main.length);
      extras.forEach((extra, i) => {
        extraWidths[i] = Math.max(extraWidths[i] ?? 0, extra.length);
      });
      plain.set(row, [main, ...extras]);
    }
  }
  return rows.map((row) => {
    const shown = displayName(row.name);
    const dots = '.'.repeat(nameWidth - shown.length - subIndent(row.name).length + 3);
    let data: string;
    const cols = trend.get(row);
    if (cols) {
      data = cols.map((col, i) => `${format.trendStats[i]}=${col.padEnd(trendWidths[i]!)}`).join(' ');
    } else {
      const [main = '', ...extras] = plain.get(row)!;
      data = main.padEnd(mainWidth);
      if (extras.length === 1) data += ` ${extras[0]}`;
      else if (extras.length > 1) data += ` ${extras.map((e, i) => e.padEnd(extraWidths[i]!)).join(' ')}`;
    }
    return `${prefix(row)}${shown}${dots}: ${data}`;
  });
}

// ---------------------------------------------------------------- k6 v1: compact and full

/** The categories of k6 v1's summary, in its order (custom first), and what falls in each. */
const CATEGORIES: readonly { title: string; holds: (name: string) => boolean }[] = [
  { title: 'HTTP', holds: (n) => startsWithAny(n, HTTP_METRICS) },
  { title: 'EXECUTION', holds: (n) => startsWithAny(n, EXECUTION_METRICS) },
  { title: 'NETWORK', holds: (n) => startsWithAny(n, ['data_sent', 'data_received']) },
  { title: 'BROWSER', holds: (n) => n.startsWith('browser_') && !n.startsWith('browser_web_vital_') },
  { title: 'WEBVITALS', holds: (n) => n.startsWith('browser_web_vital_') },
  { title: 'GRPC', holds: (n) => n.startsWith('grpc_') },
  { title: 'WEBSOCKET', holds: (n) => n.startsWith('ws_') },
];
const HTTP_METRICS = ['http_reqs', 'http_req_failed', ...HTTP_TIMING_METRICS];
const EXECUTION_METRICS = ['vus', 'vus_max', 'iterations', 'iteration_duration', 'dropped_iterations'];
/** Shown apart (checks) or not at all (group_duration), in both modes. */
const ALWAYS_LEFT_OUT = ['checks', 'group_duration'];
/** Left out of compact: the request phases (full shows them). */
const COMPACT_LEFT_OUT = HTTP_TIMING_METRICS.filter((name) => name !== 'http_req_duration');

function startsWithAny(name: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => name.startsWith(prefix));
}

/**
 * The summary's text as k6 lays it out: lines, and `end()` marks that close a part (a
 * metric's thresholds, a category, a section) and leave one blank line before what follows.
 * A title ends in a newline of its own, so a blank line follows it too.
 */
class Lines {
  #text = '';

  push(...lines: string[]): this {
    for (const line of lines) this.#text += `\n${line}`;
    return this;
  }

  title(indent: string, mark: string, text: string): this {
    return this.push(`${indent}${mark} ${text} \n`);
  }

  end(): this {
    this.#text += '\n';
    return this;
  }

  get text(): string {
    return this.#text;
  }
}

interface Block {
  checks: { name: string; passes: number; fails: number }[];
  rows: Row[];
  groups: [string, Block][];
}

function renderV1(input: TextSummaryInput): string {
  const { data, mode } = input;
  const format: Format = {
    trendStats: data.options.summaryTrendStats,
    timeUnit: data.options.summaryTimeUnit,
  };
  const seconds = data.state.testRunDurationMs / 1000;
  const out = new Lines();
  const thresholdRows = Object.entries(data.metrics)
    .filter(([, m]) => m.thresholds && Object.keys(m.thresholds).length > 0)
    .map(([name]) => name)
    .sort(byName);
  if (thresholdRows.length > 0) {
    out.title('  ', '█', 'THRESHOLDS');
    for (const name of thresholdRows) {
      const metric = data.metrics[name]!;
      const parent = name.split('{', 1)[0]!;
      const nested = parent !== name && thresholdRows.includes(parent);
      const indent = nested ? '      ' : '    ';
      out.push(`${indent}${nested ? name.slice(parent.length) : name}`);
      for (const [source, result] of Object.entries(metric.thresholds!)) {
        out.push(
          `${indent}${result.ok ? '✓' : '✗'} '${source}' ${thresholdValue(input, name, source, format)}`,
        );
      }
      out.end();
    }
    out.end();
  }

  const totalRows = Object.entries(data.metrics).map(([name, m]) => ({ name, ...m }));
  const total: Block = {
    checks: flattenChecks(data.root_group),
    rows: shownRows(totalRows, mode),
    groups: [],
  };
  out.title('  ', '█', 'TOTAL RESULTS');
  renderBlock(out, total, '    ', format, seconds);
  out.end();
  if (mode === 'full' && input.scenarios) {
    for (const [name, block] of [...input.scenarios].sort(([a], [b]) => a.localeCompare(b))) {
      out.title('  ', '█', `SCENARIO: ${name}`);
      renderBlock(out, breakdownBlock(block, format, seconds, mode), '    ', format, seconds);
      out.end();
    }
  }
  return `${out.text}\n`;
}

/** A block's checks, its metrics by category, then its groups (full mode), at `indent`. */
function renderBlock(out: Lines, block: Block, indent: string, format: Format, seconds: number): void {
  if (block.checks.length > 0) {
    const passes = block.checks.reduce((sum, c) => sum + c.passes, 0);
    const fails = block.checks.reduce((sum, c) => sum + c.fails, 0);
    const total = passes + fails;
    const checkRows: Row[] = [
      {
        name: 'checks_total',
        type: 'counter',
        contains: 'default',
        values: { count: total, rate: seconds > 0 ? total / seconds : 0 },
      },
      {
        name: 'checks_succeeded',
        type: 'rate',
        contains: 'default',
        values: { rate: total ? passes / total : 0, passes, fails },
      },
      {
        name: 'checks_failed',
        type: 'rate',
        contains: 'default',
        values: { rate: total ? fails / total : 0, passes: fails, fails: passes },
      },
    ];
    out.push(...tableLines(checkRows, format, () => indent)).end();
    for (const check of block.checks) {
      if (check.fails === 0) {
        out.push(`${indent}✓ ${check.name}`);
        continue;
      }
      const percent = Math.floor((100 * check.passes) / (check.passes + check.fails));
      out.push(`${indent}✗ ${check.name}\n${indent}  ↳  ${percent}% — ✓ ${check.passes} / ✗ ${check.fails}`);
    }
    out.end();
  }
  const custom = block.rows.filter((r) => !CATEGORIES.some((c) => c.holds(r.name)));
  const sections = [
    { title: 'CUSTOM', rows: custom },
    ...CATEGORIES.map((c) => ({ title: c.title, rows: block.rows.filter((r) => c.holds(r.name)) })),
  ].filter((s) => s.rows.length > 0);
  // One layout for the whole block: columns line up from one category to the next.
  const all = sections.flatMap((s) => s.rows.sort((a, b) => byName(a.name, b.name)));
  const rendered = tableLines(all, format, (row) => indent + subIndent(row.name));
  const lines = new Map(all.map((row, i) => [row, rendered[i]!]));
  for (const section of sections) {
    out.push(`${indent}${section.title}`);
    for (const row of section.rows) out.push(lines.get(row)!);
    out.end();
  }
  for (const [name, group] of block.groups) {
    out.title(indent, '↳', `GROUP: ${name}`);
    renderBlock(out, group, `${indent}  `, format, seconds);
  }
}

/** The rows a mode shows: never checks or group_duration; compact leaves out the request phases. */
function shownRows(rows: Row[], mode: TextSummaryMode): Row[] {
  return rows.filter((r) => summaryShows(r.name, mode));
}

/**
 * Whether k6's v1 summary (text and machine-readable) lists a metric: never checks (shown
 * apart) or group_duration; compact leaves out the request phases too.
 */
export function summaryShows(name: string, mode: TextSummaryMode): boolean {
  return (
    !startsWithAny(name, ALWAYS_LEFT_OUT) && !(mode === 'compact' && startsWithAny(name, COMPACT_LEFT_OUT))
  );
}

function breakdownBlock(
  block: BreakdownBlock,
  format: Format,
  seconds: number,
  mode: TextSummaryMode,
): Block {
  const rows: Row[] = [...block.metrics].map(([name, m]) => ({
    name,
    type: m.type,
    contains: m.contains,
    values: sinkValues(m.sink, format.trendStats, seconds),
  }));
  return {
    checks: [...block.checks].map(([name, counts]) => ({ name, ...counts })),
    rows: shownRows(rows, mode),
    groups: [...block.groups]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, inner]) => [name, breakdownBlock(inner, format, seconds, mode)]),
  };
}

function flattenChecks(group: SummaryData['root_group']): Block['checks'] {
  return [...group.checks, ...group.groups.flatMap(flattenChecks)];
}

/** `p(95)=148.21ms`: the value a threshold was judged on, as the summary writes it. */
function thresholdValue(input: TextSummaryInput, name: string, source: string, format: Format): string {
  const metric = input.data.metrics[name]!;
  const values = input.thresholdValues[name] ?? {};
  const aggregation = Object.keys(values).find((a) => source.trimStart().startsWith(a)) ?? '';
  const value = values[aggregation] ?? 0;
  const row = { type: metric.type, contains: metric.contains };
  if (metric.type === 'trend' && aggregation === 'count') return `count=${value}`;
  if (metric.type === 'counter' && aggregation !== 'count') {
    return `${aggregation}=${formatValue(value, row, format.timeUnit)}/s`;
  }
  return `${aggregation}=${formatValue(value, row, format.timeUnit)}`;
}

// ---------------------------------------------------------------- legacy (pre-v1)

function renderLegacy(input: TextSummaryInput): string {
  const { data } = input;
  const format: Format = {
    trendStats: data.options.summaryTrendStats,
    timeUnit: data.options.summaryTimeUnit,
  };
  const lines: string[] = [];
  const group = (indent: string, g: SummaryData['root_group']) => {
    let inner = indent;
    if (g.name !== '') {
      lines.push(`${indent}█ ${g.name}\n`);
      inner = `${indent}  `;
    }
    for (const check of g.checks) {
      if (check.fails === 0) lines.push(`${inner}✓ ${check.name}`);
      else {
        const percent = Math.floor((100 * check.passes) / (check.passes + check.fails));
        lines.push(`${inner}✗ ${check.name}\n${inner} ↳  ${percent}% — ✓ ${check.passes} / ✗ ${check.fails}`);
      }
    }
    if (g.checks.length > 0) lines.push('');
    for (const child of g.groups) group(inner, child);
  };
  group('     ', data.root_group);
  const rows = Object.entries(data.metrics)
    .map(([name, m]) => ({ name, ...m }))
    .sort((a, b) => byName(a.name, b.name));
  const mark = (row: Row) => {
    const thresholds = data.metrics[row.name]?.thresholds;
    if (!thresholds) return ' ';
    return Object.values(thresholds).every((t) => t.ok) ? '✓' : '✗';
  };
  lines.push(...tableLines(rows, format, (row) => `   ${subIndent(row.name)}${mark(row)} `));
  return `\n${lines.join('\n')}\n\n`;
}
