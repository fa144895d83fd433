// Reads a Prometheus text exposition (format 0.0.4, and OpenMetrics text) into meter samples.
//
// Written here rather than taken from npm: the one maintained-looking parser
// (parse-prometheus-text-format 1.1.1, last built with Babel 7.5 in 2019) throws on the first
// line it does not understand, knows neither `# EOF` nor exemplars, and returns values as
// strings grouped by family. A source must count bad lines and keep going, and the format
// is a line grammar of a page.
import type { MeterSample } from '../../contract/index.ts';

/** What a body held: its finite samples, what was dropped, and whether it was Prometheus text at all. */
export interface PrometheusText {
  samples: MeterSample[];
  dropped: {
    /** Samples whose value was NaN, +Inf or -Inf: not readings of anything. */
    nonFinite: number;
    /** Sample lines that did not parse (the others were kept). */
    invalidLines: number;
  };
  /** The first line that did not parse, cut to 80 characters; null when every line parsed. */
  firstInvalidLine: string | null;
  /** Names of samples `keep` turned away, so a source can list the meters nobody reads. */
  skippedNames: Set<string>;
  /** Why the body is not Prometheus text (`not Prometheus text: …`); null when it is. */
  error: string | null;
}

export interface PrometheusTextOptions {
  /** Keep only samples with these names (the rest are named in `skippedNames`, not parsed further). */
  keep?: (name: string) => boolean;
}

/**
 * Parses a `/metrics` body. Comments (`# HELP`, `# TYPE`, `# UNIT`, any other `#` line) are
 * skipped, `# EOF` ends the body, label values are unescaped (`\"`, `\\`, `\n`), timestamps
 * and exemplars (after ` # `) are read past: a scrape is stamped with plateau's clock. NaN
 * and ±Inf values are dropped and counted. Bad input never throws: a line that does not
 * parse is counted; a body most of whose sample lines fail, or that is empty, HTML or JSON,
 * gives `error` and no samples.
 */
export function parsePrometheusText(text: string, options: PrometheusTextOptions = {}): PrometheusText {
  const result: PrometheusText = {
    samples: [],
    dropped: { nonFinite: 0, invalidLines: 0 },
    firstInvalidLine: null,
    skippedNames: new Set(),
    error: null,
  };
  const notText = notPrometheusText(text);
  if (notText !== null) {
    result.error = `not Prometheus text: ${notText}`;
    return result;
  }
  const keep = options.keep;
  let parsed = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    let line = text.slice(start, end);
    start = end + 1;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const first = firstNonBlank(line);
    if (first === -1) continue;
    if (line.charCodeAt(first) === HASH) {
      if (line.slice(first).trimEnd() === '# EOF') break;
      continue;
    }
    const sample = parseSampleLine(line, first, keep, result.skippedNames);
    if (sample === INVALID) {
      result.dropped.invalidLines++;
      result.firstInvalidLine ??= cut(line.trim(), 80);
      continue;
    }
    parsed++;
    if (sample === SKIPPED) continue;
    if (Number.isFinite(sample.value)) result.samples.push(sample);
    else result.dropped.nonFinite++;
  }
  if (result.dropped.invalidLines > parsed) {
    const lines = result.dropped.invalidLines + parsed;
    result.error = `not Prometheus text: ${result.dropped.invalidLines} of ${lines} lines did not parse, the first "${result.firstInvalidLine}"`;
    result.samples = [];
  }
  return result;
}

const HASH = 0x23;
const INVALID = Symbol('invalid');
const SKIPPED = Symbol('skipped');

/** What the body looks like when it is plainly not the format (empty, HTML, JSON); null otherwise. */
function notPrometheusText(text: string): string | null {
  const body = text.trimStart();
  if (body === '') return 'the body is empty';
  const firstLine = cut(body.slice(0, body.search(/\r?\n|$/)).trim(), 40);
  const c = body[0];
  if (c === '<') return `the body starts with "${firstLine}"`;
  // `{"name",label="v"} 1` is a sample in the UTF-8 names form, so only a body that parses
  // as JSON is called JSON.
  if ((c === '{' || c === '[') && isJson(body)) return `the body is JSON and starts with "${firstLine}"`;
  return null;
}

function isJson(body: string): boolean {
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

function cut(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

function firstNonBlank(line: string): number {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09) return i;
  }
  return -1;
}

function skipBlanks(line: string, i: number): number {
  while (i < line.length && (line.charCodeAt(i) === 0x20 || line.charCodeAt(i) === 0x09)) i++;
  return i;
}

/** `[a-zA-Z_:]` first, then `[a-zA-Z0-9_:]` (metric names); labels allow no colon, checked by the caller. */
function isNameChar(c: number, first: boolean): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) || // a-z
    (c >= 0x41 && c <= 0x5a) || // A-Z
    c === 0x5f || // _
    c === 0x3a || // :
    (!first && c >= 0x30 && c <= 0x39) // 0-9
  );
}

function readName(line: string, i: number): number {
  let j = i;
  while (j < line.length && isNameChar(line.charCodeAt(j), j === i)) j++;
  return j;
}

/** A quoted string from `i` (at its opening quote): its unescaped value and the index past it. */
function readQuoted(line: string, i: number): { value: string; end: number } | null {
  let value = '';
  let from = i + 1;
  for (let j = i + 1; j < line.length; j++) {
    const c = line[j];
    if (c === '"') return { value: value + line.slice(from, j), end: j + 1 };
    if (c === '\\' && j + 1 < line.length) {
      const next = line[j + 1];
      value +=
        line.slice(from, j) + (next === 'n' ? '\n' : next === '\\' || next === '"' ? next : `\\${next}`);
      j++;
      from = j + 1;
    }
  }
  return null;
}

/**
 * One sample line: `name{label="v",…} value [timestamp] [# exemplar]`, or the UTF-8 names
 * form `{"name",label="v"} value`. Label sets may end with a comma (Micrometer's older
 * output does).
 */
function parseSampleLine(
  line: string,
  i: number,
  keep: ((name: string) => boolean) | undefined,
  skipped: Set<string>,
): MeterSample | typeof INVALID | typeof SKIPPED {
  let name = '';
  if (line[i] !== '{') {
    const end = readName(line, i);
    if (end === i) return INVALID;
    name = line.slice(i, end);
    i = end;
    if (keep && !keep(name)) {
      skipped.add(name);
      return SKIPPED;
    }
  }
  const labels: Record<string, string> = {};
  i = skipBlanks(line, i);
  if (line[i] === '{') {
    i++;
    for (;;) {
      i = skipBlanks(line, i);
      if (line[i] === '}') {
        i++;
        break;
      }
      let label: string;
      if (line[i] === '"') {
        const quoted = readQuoted(line, i);
        if (!quoted) return INVALID;
        i = skipBlanks(line, quoted.end);
        if (name === '' && (line[i] === ',' || line[i] === '}')) {
          // The metric's own name, quoted inside the braces.
          name = quoted.value;
          if (keep && !keep(name)) {
            skipped.add(name);
            return SKIPPED;
          }
          if (line[i] === ',') i++;
          continue;
        }
        label = quoted.value;
      } else {
        const end = readName(line, i);
        if (end === i) return INVALID;
        label = line.slice(i, end);
        i = skipBlanks(line, end);
      }
      if (line[i] !== '=') return INVALID;
      i = skipBlanks(line, i + 1);
      if (line[i] !== '"') return INVALID;
      const value = readQuoted(line, i);
      if (!value) return INVALID;
      labels[label] = value.value;
      i = skipBlanks(line, value.end);
      if (line[i] === ',') i++;
      else if (line[i] !== '}') return INVALID;
    }
  }
  if (name === '') return INVALID;
  i = skipBlanks(line, i);
  const valueEnd = tokenEnd(line, i);
  const value = parseValue(line.slice(i, valueEnd));
  if (value === undefined) return INVALID;
  i = skipBlanks(line, valueEnd);
  if (i < line.length && line.charCodeAt(i) !== HASH) {
    // A timestamp (ms in 0.0.4, seconds in OpenMetrics): read past, plateau stamps the scrape.
    const stampEnd = tokenEnd(line, i);
    if (parseValue(line.slice(i, stampEnd)) === undefined) return INVALID;
    i = skipBlanks(line, stampEnd);
  }
  // What is left is an exemplar (` # {trace_id="…"} 1`), which says nothing of capacity.
  if (i < line.length && line.charCodeAt(i) !== HASH) return INVALID;
  return { name, labels, value };
}

function tokenEnd(line: string, i: number): number {
  while (i < line.length && line.charCodeAt(i) !== 0x20 && line.charCodeAt(i) !== 0x09) i++;
  return i;
}

const NON_FINITE: Record<string, number> = {
  nan: Number.NaN,
  inf: Number.POSITIVE_INFINITY,
  '+inf': Number.POSITIVE_INFINITY,
  infinity: Number.POSITIVE_INFINITY,
  '+infinity': Number.POSITIVE_INFINITY,
  '-inf': Number.NEGATIVE_INFINITY,
  '-infinity': Number.NEGATIVE_INFINITY,
};

/** A value as Go's ParseFloat reads it (NaN and Inf in any case); undefined when it is not a number. */
function parseValue(token: string): number | undefined {
  if (token === '') return undefined;
  const special = NON_FINITE[token.toLowerCase()];
  if (special !== undefined) return special;
  const value = Number(token);
  return Number.isNaN(value) ? undefined : value;
}
