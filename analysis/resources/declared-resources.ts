// Resources declared in plateau.config (`resources: [...]`): their validation, and how each field is read.
import {
  type ConfigProblem,
  type DeclaredResource,
  type MeterSample,
  ON_FULL,
  RESOURCE_KINDS,
  RESOURCE_ROLES,
  type ResourceKind,
  type ResourceRole,
} from '../../contract/index.ts';

/** The fields of a declared resource that name a series. */
export const DECLARED_FIELDS = ['inUse', 'max', 'waiting', 'depth', 'cap'] as const;
export type DeclaredField = (typeof DECLARED_FIELDS)[number];

/** Which fields each kind reads, the first of them required. */
export const FIELDS_OF_KIND: Record<ResourceKind, readonly DeclaredField[]> = {
  slots: ['inUse', 'max', 'waiting'],
  queue: ['depth', 'cap'],
  cpu: ['inUse', 'max'],
};

/** The role a declared resource plays when it does not say. */
export const DEFAULT_ROLE: Record<ResourceKind, ResourceRole> = { slots: 'pool', queue: 'queue', cpu: 'cpu' };
/** Between the request threads (0) and the database (3). */
export const DEFAULT_POSITION = 1;

const OTHER_KEYS = ['name', 'kind', 'role', 'position', 'onFull'] as const;

/** What a field's series means, for hints. */
const FIELD_MEANING: Record<DeclaredField, string> = {
  inUse: 'slots in use (cpu: cores busy)',
  max: 'the most slots (cpu: cores)',
  waiting: 'callers waiting',
  depth: "the queue's depth",
  cap: "the queue's cap",
};

/** A plain selector: `name` or `name{label="v",…}`, equality matchers only. */
export interface MetricSelector {
  name: string;
  matchers: Readonly<Record<string, string>>;
}

/** How one field of a declared resource is read from the scrapes. */
export interface DeclaredFieldReading {
  field: DeclaredField;
  /** As the user wrote it. */
  expr: string;
  /** The series to sum: the selector's own name and matchers, or the Prometheus source's result of the PromQL. */
  selector: MetricSelector;
  /** true when `expr` is PromQL that only a Prometheus server evaluates. */
  promql: boolean;
  /** A counter (a selector of a `_total` series): read as its increase per second. */
  counter: boolean;
}

/**
 * Validates the `resources` value of plateau.config. Every problem is returned at once with
 * a hint; a resource with a problem is left out. Undefined (not configured) is no resources
 * and no problem. Role, position and onFull are filled with their defaults.
 */
export function parseDeclaredResources(raw: unknown): {
  resources: DeclaredResource[];
  problems: ConfigProblem[];
} {
  const resources: DeclaredResource[] = [];
  const problems: ConfigProblem[] = [];
  if (raw === undefined) return { resources, problems };
  if (!Array.isArray(raw)) {
    problems.push({
      setting: 'resources',
      message: `must be a list, got ${describe(raw)}`,
      hint: "resources: [{ name: 'orders pool', kind: 'slots', inUse: 'pool_in_use', max: 'pool_max' }]",
    });
    return { resources, problems };
  }
  const seen = new Map<string, string>();
  raw.forEach((entry, i) => {
    const at = `resources[${i}]`;
    const before = problems.length;
    const add = (field: string, message: string, hint: string) =>
      problems.push({ setting: field === '' ? at : `${at}.${field}`, message, hint });
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      add(
        '',
        `must be an object, got ${describe(entry)}`,
        "{ name: 'orders pool', kind: 'slots', inUse: '…', max: '…' }",
      );
      return;
    }
    const e = entry as Record<string, unknown>;
    const name = e.name;
    if (typeof name !== 'string' || name.trim() === '') {
      add(
        'name',
        `must be a non-empty string, got ${describe(name)}`,
        'the name the verdict calls it by, e.g. "orders pool"',
      );
    } else {
      const key = sanitiseResourceName(name);
      const other = seen.get(key);
      if (other !== undefined)
        add(
          'name',
          other === name
            ? `"${name}" is declared twice`
            : `"${name}" and "${other}" read as the same name (${key})`,
          'give each resource its own name',
        );
      else seen.set(key, name);
    }
    const kind = e.kind;
    const kindOk = typeof kind === 'string' && (RESOURCE_KINDS as readonly string[]).includes(kind);
    if (!kindOk)
      add(
        'kind',
        `must be one of ${RESOURCE_KINDS.join(', ')}, got ${describe(kind)}`,
        'slots: in use of a max, with waiters; queue: a depth of a cap; cpu: cores busy of cores',
      );
    if (e.role !== undefined && !(RESOURCE_ROLES as readonly unknown[]).includes(e.role))
      add('role', `must be one of ${RESOURCE_ROLES.join(', ')}, got ${describe(e.role)}`, 'or leave it out');
    if (e.onFull !== undefined && !(ON_FULL as readonly unknown[]).includes(e.onFull))
      add('onFull', `must be one of ${ON_FULL.join(', ')}, got ${describe(e.onFull)}`, 'or leave it out');
    if (
      e.position !== undefined &&
      !(typeof e.position === 'number' && Number.isFinite(e.position) && e.position >= 0)
    )
      add(
        'position',
        `must be a number ≥ 0, got ${describe(e.position)}`,
        '0: request threads, 1: pools in the service (the default), 2: a proxy, 3: the database',
      );
    for (const key of Object.keys(e)) {
      if (
        (DECLARED_FIELDS as readonly string[]).includes(key) ||
        (OTHER_KEYS as readonly string[]).includes(key)
      )
        continue;
      add(
        key,
        'is not a field of a resource',
        `the fields are ${[...OTHER_KEYS, ...DECLARED_FIELDS].join(', ')}`,
      );
    }
    const fields = kindOk ? FIELDS_OF_KIND[kind as ResourceKind] : DECLARED_FIELDS;
    for (const field of DECLARED_FIELDS) {
      const value = e[field];
      if (value === undefined) continue;
      if (kindOk && !fields.includes(field)) {
        add(field, `a ${kind} resource has no ${field}`, `a ${kind} resource reads ${listOf(fields)}`);
        continue;
      }
      if (typeof value !== 'string' || value.trim() === '') {
        add(
          field,
          `must be a metric selector or a PromQL expression, got ${describe(value)}`,
          `the series of ${FIELD_MEANING[field]}, e.g. 'pool_in_use{pool="orders"}'`,
        );
        continue;
      }
      const unbalanced = unbalancedIn(value);
      if (unbalanced)
        add(field, `${JSON.stringify(value)} has ${unbalanced}`, `a selector reads name{label="value",…}`);
    }
    if (kindOk) {
      const required = fields[0]!;
      if (e[required] === undefined)
        add(
          required,
          `a ${kind} resource needs ${required}`,
          `the series of ${FIELD_MEANING[required]}, a selector or a PromQL expression`,
        );
    }
    if (problems.length > before) return;
    const k = kind as ResourceKind;
    const resource: DeclaredResource = {
      name: name as string,
      kind: k,
      role: (e.role as ResourceRole | undefined) ?? DEFAULT_ROLE[k],
      position: (e.position as number | undefined) ?? DEFAULT_POSITION,
      onFull: (e.onFull as DeclaredResource['onFull']) ?? 'unknown',
    };
    for (const field of FIELDS_OF_KIND[k])
      if (typeof e[field] === 'string') resource[field] = (e[field] as string).trim();
    resources.push(resource);
  });
  return { resources, problems };
}

/**
 * The name under which the Prometheus source emits the result of a declared field's PromQL
 * (`plateau_declared:orders_pool:inUse`): the resource's name lower-cased with every
 * character outside `[a-z0-9_]` made `_`. Colons mark it as a recorded result, as Prometheus'
 * own recording rules do, so it cannot clash with a meter a service publishes.
 */
export function declaredMeterName(resourceName: string, field: DeclaredField | (string & {})): string {
  return `plateau_declared:${sanitiseResourceName(resourceName)}:${field}`;
}

/** A resource name as it appears in a meter name (`Orders pool` → `orders_pool`). */
export function sanitiseResourceName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_');
}

/** Each field a declared resource gives, and how it is read. */
export function declaredFieldReadings(resource: DeclaredResource): DeclaredFieldReading[] {
  const out: DeclaredFieldReading[] = [];
  for (const field of FIELDS_OF_KIND[resource.kind]) {
    const expr = resource[field];
    if (expr === undefined) continue;
    const selector = parseSelector(expr);
    if (selector)
      out.push({ field, expr, selector, promql: false, counter: selector.name.endsWith('_total') });
    else
      out.push({
        field,
        expr,
        selector: { name: declaredMeterName(resource.name, field), matchers: {} },
        promql: true,
        counter: false,
      });
  }
  return out;
}

/**
 * A plain selector, `name` or `name{label="v",other='w'}` (equality matchers, values in
 * either quote); null for anything else (regex or negative matchers, functions,
 * arithmetic), which is PromQL for a Prometheus server.
 */
export function parseSelector(expr: string): MetricSelector | null {
  const text = expr.trim();
  const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(text)?.[0];
  if (!name) return null;
  let i = skipBlanks(text, name.length);
  if (i === text.length) return { name, matchers: {} };
  if (text[i] !== '{') return null;
  const matchers: Record<string, string> = {};
  i++;
  for (;;) {
    i = skipBlanks(text, i);
    if (text[i] === '}') break;
    const label = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i))?.[0];
    if (!label) return null;
    i = skipBlanks(text, i + label.length);
    if (text[i] !== '=' || text[i + 1] === '~') return null;
    i = skipBlanks(text, i + 1);
    const quote = text[i];
    if (quote !== '"' && quote !== "'") return null;
    let value = '';
    let j = i + 1;
    for (; j < text.length && text[j] !== quote; j++) {
      if (text[j] === '\\' && j + 1 < text.length) {
        j++;
        value += text[j] === 'n' ? '\n' : text[j];
      } else value += text[j];
    }
    if (j >= text.length) return null;
    matchers[label] = value;
    i = skipBlanks(text, j + 1);
    if (text[i] === ',') i++;
    else if (text[i] !== '}') return null;
  }
  return skipBlanks(text, i + 1) === text.length ? { name, matchers } : null;
}

/** Whether a sample is one of the series a selector names. */
export function selectorMatches(selector: MetricSelector, sample: MeterSample): boolean {
  if (sample.name !== selector.name) return false;
  for (const label in selector.matchers)
    if ((sample.labels[label] ?? '') !== selector.matchers[label]) return false;
  return true;
}

function skipBlanks(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  return i;
}

/** Unclosed quotes or unbalanced brackets, which neither a selector nor PromQL can have. */
function unbalancedIn(expr: string): string | null {
  const closers: string[] = [];
  const pairs: Record<string, string> = { '{': '}', '(': ')', '[': ']' };
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += expr[j] === '\\' ? 2 : 1;
      if (j >= expr.length) return `an unclosed ${c}`;
      i = j;
    } else if (pairs[c]) closers.push(pairs[c]);
    else if (c === '}' || c === ')' || c === ']') {
      if (closers.pop() !== c) return `an unmatched ${c}`;
    }
  }
  return closers.length > 0
    ? `an unclosed ${Object.keys(pairs).find((k) => pairs[k] === closers.at(-1))}`
    : null;
}

function listOf(items: readonly string[]): string {
  return items.length === 1 ? items[0]! : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}
