// PostgreSQL's own view of a study: backends by state and wait, slots in use of the usable
// max, and the database processes' CPU when they run on this host, as meter scrapes.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import type { MeterSample, MeterScrape, MeterSourceStatus } from '../../contract/index.ts';
import { usableCores } from '../../lib/proc-stat.ts';
import { redactUrl } from '../db/database-info.ts';
import { type MeterLog, type MeterSource, StatusTally } from './meter-source.ts';

/** The application_name of the source's own connection; its backend is left out of every count. */
export const MONITOR_APPLICATION_NAME = 'plateau-monitor';

/**
 * The meter names this source writes. The `postgres` meter family reads exactly these:
 * never rename one.
 */
export const PG_METERS = {
  /** gauge{state}: client backends by `pg_stat_activity.state`. */
  backends: 'plateau_pg_backends',
  /** gauge{wait_event_type}: active client backends waiting on something, by what. */
  backendsWaiting: 'plateau_pg_backends_waiting',
  /**
   * gauge: client backends, of every state. The source's own connection holds one slot too
   * but is not counted: at a full database this reads the max less one (or less none when
   * the monitor logs in as a superuser and takes a reserved slot).
   */
  connectionsInUse: 'plateau_pg_connections_in_use',
  /** gauge: max_connections less superuser_reserved_connections and reserved_connections (16+). */
  connectionsMax: 'plateau_pg_connections_max',
  /**
   * counter: CPU seconds (user + system) of the postmaster and all its children, the
   * source's own backend included (one small query a second); local only.
   */
  cpuSecondsTotal: 'plateau_pg_cpu_seconds_total',
  /** gauge: cores of the host the database runs on; local only. */
  hostCpuCount: 'plateau_pg_host_cpu_count',
} as const;

/**
 * States a client backend can be in (`pg_stat_activity.state`), always written, 0 when
 * none, so a second with no idle backend reads 0 rather than missing. `unknown` is a
 * backend whose state this role may not see (another role's session without
 * pg_read_all_stats) or that is still starting.
 */
const BACKEND_STATES = [
  'active',
  'idle',
  'idle in transaction',
  'idle in transaction (aborted)',
  'fastpath function call',
  'disabled',
] as const;

/** `wait_event_type` values of PostgreSQL 10–18, always written (0 when none). */
const WAIT_EVENT_TYPES = [
  'Lock',
  'LWLock',
  'IO',
  'Client',
  'IPC',
  'Timeout',
  'BufferPin',
  'Extension',
  'Activity',
] as const;

/**
 * The one query a reading sends. Cost: one pass over pg_stat_activity (shared memory, no
 * table or index I/O) and four settings, once a second over the source's one connection.
 * Every client backend is listed as [state, wait_event_type]; counting happens here, so the
 * query stays the same on every version from 10 (which added backend_type) on.
 */
const ACTIVITY_SQL = `
  SELECT pg_backend_pid() AS self_pid,
         current_setting('max_connections')::int AS max_connections,
         current_setting('superuser_reserved_connections')::int AS superuser_reserved,
         coalesce(current_setting('reserved_connections', true), '0')::int AS reserved,
         coalesce((SELECT json_agg(json_build_array(state, wait_event_type))
                     FROM pg_stat_activity
                    WHERE backend_type = 'client backend'
                      AND pid <> pg_backend_pid()
                      AND application_name IS DISTINCT FROM '${MONITOR_APPLICATION_NAME}'),
                  '[]'::json) AS clients`;

/** One row of {@link ACTIVITY_SQL}. */
export interface ActivityRow {
  self_pid: number;
  max_connections: number;
  superuser_reserved: number;
  reserved: number;
  /** [state, wait_event_type] of each client backend but the source's own. */
  clients: [string | null, string | null][];
}

/**
 * The samples of one reading (pure): backends by state and by wait event type, in use and
 * max, and the CPU counter with the host's cores when `cpuSeconds` is given (the database
 * runs on this host).
 */
export function activitySamples(
  row: ActivityRow,
  cpu: { cpuSeconds: number; hostCores: number } | null,
): MeterSample[] {
  const byState = new Map<string, number>(BACKEND_STATES.map((s) => [s, 0]));
  const waiting = new Map<string, number>(WAIT_EVENT_TYPES.map((w) => [w, 0]));
  for (const [state, waitType] of row.clients) {
    const key = state ?? 'unknown';
    byState.set(key, (byState.get(key) ?? 0) + 1);
    // An idle backend waits on its client (ClientRead) by definition: only active ones count.
    if (state === 'active' && waitType !== null) waiting.set(waitType, (waiting.get(waitType) ?? 0) + 1);
  }
  const samples: MeterSample[] = [];
  for (const [state, value] of byState) samples.push({ name: PG_METERS.backends, labels: { state }, value });
  for (const [type, value] of waiting) {
    samples.push({ name: PG_METERS.backendsWaiting, labels: { wait_event_type: type }, value });
  }
  samples.push({ name: PG_METERS.connectionsInUse, labels: {}, value: row.clients.length });
  samples.push({
    name: PG_METERS.connectionsMax,
    labels: {},
    value: row.max_connections - row.superuser_reserved - row.reserved,
  });
  if (cpu) {
    samples.push({ name: PG_METERS.cpuSecondsTotal, labels: {}, value: cpu.cpuSeconds });
    samples.push({ name: PG_METERS.hostCpuCount, labels: {}, value: cpu.hostCores });
  }
  return samples;
}

/** The defaults of a PostgreSQL activity source, in one place. */
export const POSTGRES_ACTIVITY_DEFAULTS = {
  /** The resolution of the step analysis, as for a metrics endpoint. */
  intervalMs: 1000,
  /**
   * Longer than the interval, unlike an HTTP endpoint's: a reading that times out drops its
   * connection, and a new one costs the database a fork and an authentication, which must
   * not happen every second on a database already saturated. A reading slower than the
   * interval is still written; the ticks it overlaps are skipped.
   */
  timeoutMs: 5000,
} as const;

/** Options for {@link PostgresActivitySource}. */
export interface PostgresActivityOptions {
  /** The database's URL (credentials included; the label never shows them). */
  url: string;
  /** Where each reading goes (the run's meters.ndjson). */
  log: MeterLog;
  /** Time between readings, ms. */
  intervalMs?: number;
  /** A reading (connect and query) that takes longer fails with `timed out after N ms`. */
  timeoutMs?: number;
  /** Epoch ms; the time written with each reading (when its query was sent). */
  clock?: { now(): number };
}

/**
 * Reads PostgreSQL once a second through one dedicated connection (application_name
 * `plateau-monitor`, left out of its own counts) and appends a {@link MeterScrape} of
 * {@link PG_METERS} per reading. A reading that fails (the database gone, permission
 * denied, too slow) is a counted failure in words and the next one connects anew; a
 * reading still running when the next is due is skipped (counted), never stacked. The CPU
 * counter is written only while the database runs on this host: a loopback or socket host
 * whose backend pid is a postgres process in this machine's /proc.
 */
export class PostgresActivitySource implements MeterSource {
  readonly kind = 'postgres' as const;
  readonly label: string;
  readonly #url: string;
  readonly #log: MeterLog;
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  readonly #tally = new StatusTally();
  readonly #cpu = new PostmasterCpu();
  #client: pg.Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  #inFlight = false;
  #stopped = false;
  #cpuNote = 'not read yet';

  constructor(options: PostgresActivityOptions) {
    this.#url = options.url;
    this.#log = options.log;
    this.#intervalMs = options.intervalMs ?? POSTGRES_ACTIVITY_DEFAULTS.intervalMs;
    this.#timeoutMs = options.timeoutMs ?? POSTGRES_ACTIVITY_DEFAULTS.timeoutMs;
    const clock = options.clock;
    this.#now = clock ? () => clock.now() : Date.now;
    this.label = `postgres ${describeUrl(options.url)}`;
  }

  /** Whether the CPU counter is being written, and if not, why (for the run's notes). */
  get cpuNote(): string {
    return this.#cpuNote;
  }

  /** How the source fares so far (the same shape `stop()` resolves with). */
  get status(): MeterSourceStatus {
    return this.#tally.status(this.label, this.kind);
  }

  /** Takes a first reading now, then one every interval until {@link stop}. */
  start(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    this.#tick();
  }

  /**
   * Stops reading and closes the connection. A reading in flight is abandoned (its result
   * is not written). Never rejects.
   */
  async stop(): Promise<MeterSourceStatus> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#dropClient();
    return this.#tally.status(this.label, this.kind);
  }

  #tick(): void {
    if (this.#inFlight) {
      this.#tally.skipped++;
      return;
    }
    this.#inFlight = true;
    void this.#read().finally(() => {
      this.#inFlight = false;
    });
  }

  async #read(): Promise<void> {
    this.#tally.attempts++;
    const atMs = this.#now();
    const startedMs = performance.now();
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      // Ending the connection makes the pending connect or query reject at once.
      void this.#dropClient();
    }, this.#timeoutMs);
    try {
      const client = await this.#connected();
      const { rows } = await client.query<ActivityRow>(ACTIVITY_SQL);
      if (this.#stopped) return;
      const row = rows[0]!;
      const cpu = this.#readCpu(client, row.self_pid);
      this.#log.append({
        kind: 'plateau.meter-scrape',
        source: this.label,
        atMs,
        samples: activitySamples(row, cpu),
      });
      this.#tally.readTook(performance.now() - startedMs);
    } catch (error) {
      if (this.#stopped) return;
      this.#tally.fail(timedOut ? `timed out after ${this.#timeoutMs} ms` : describePgFailure(error));
      await this.#dropClient();
    } finally {
      clearTimeout(deadline);
    }
  }

  async #connected(): Promise<pg.Client> {
    if (this.#client) return this.#client;
    const client = new pg.Client({
      connectionString: this.#url,
      application_name: MONITOR_APPLICATION_NAME,
      connectionTimeoutMillis: this.#timeoutMs,
    });
    // A connection that dies between readings (the server shut down) emits 'error': without a
    // listener that would end the process. The next reading finds it gone and reconnects.
    client.on('error', () => {
      if (this.#client === client) this.#client = undefined;
    });
    this.#client = client;
    try {
      await client.connect();
    } catch (error) {
      if (this.#client === client) this.#client = undefined;
      throw error;
    }
    return client;
  }

  async #dropClient(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    // end() on a connection the server already closed resolves at once; errors say nothing new.
    await client?.end().catch(() => undefined);
  }

  /** The CPU figures when the database runs here, else null (with the reason kept in cpuNote). */
  #readCpu(client: pg.Client, backendPid: number): { cpuSeconds: number; hostCores: number } | null {
    const host = client.host;
    if (!isLocalHost(host)) {
      this.#cpuNote = `not read: the database host ${host} is not this machine's loopback or a socket`;
      return null;
    }
    const postmaster = postmasterOf(backendPid);
    if (postmaster === undefined) {
      this.#cpuNote = `not read: backend pid ${backendPid} is not a postgres process here (another pid namespace, a container?)`;
      return null;
    }
    const cpuSeconds = this.#cpu.read(postmaster);
    if (cpuSeconds === undefined) {
      this.#cpuNote = `not read: /proc/${postmaster}/stat is unreadable`;
      return null;
    }
    this.#cpuNote = `read from /proc: postmaster ${postmaster} and its children`;
    return { cpuSeconds, hostCores: usableCores() };
  }
}

/** `127.0.0.1:5432/orders` from a URL, without credentials. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.host !== '') return `${parsed.host}${parsed.pathname}`;
  } catch {
    // Not a URL (a key=value string): the redacted form below says what it can.
  }
  return redactUrl(url);
}

/** Loopback or a Unix socket directory: the only hosts whose processes this machine can see. */
function isLocalHost(host: string): boolean {
  return host.startsWith('/') || ['127.0.0.1', '::1', '[::1]', 'localhost'].includes(host);
}

/** A failed reading in the words a status shows. */
function describePgFailure(error: unknown): string {
  const err = error as (Error & { code?: string; severity?: string }) | null;
  switch (err?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
  }
  // Errors from the server carry SQLSTATE as code (57P01 shutdown, 42501 permission denied).
  if (err?.severity) return `${err.message} (SQLSTATE ${err.code})`;
  return err?.message ? err.message : String(error);
}

// ---- CPU of the postmaster's tree, from /proc ------------------------------------------

/** USER_HZ: /proc counts CPU time in these ticks per second on every Linux architecture. */
const CLOCK_TICKS_PER_SEC = 100;

/** Fields of /proc/<pid>/stat after "pid (comm) ", from proc(5). */
interface ProcStat {
  ppid: number;
  /** utime + stime, ticks. */
  ownTicks: number;
  /** cutime + cstime: CPU of children this process has reaped, ticks. */
  reapedTicks: number;
}

function readProcStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may hold spaces and parentheses: the fields start after the last ')'.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // state is field 0, ppid 1, utime 11, stime 12, cutime 13, cstime 14.
    return {
      ppid: Number(f[1]),
      ownTicks: Number(f[11]) + Number(f[12]),
      reapedTicks: Number(f[13]) + Number(f[14]),
    };
  } catch {
    return undefined;
  }
}

function isPostgresProcess(pid: number): boolean {
  try {
    // A backend's title is `postgres: user db host(port) state`; the postmaster's `…/postgres -D …`.
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch {
    return false;
  }
}

/** The postmaster of backend `pid` (its parent), when both are postgres processes here. */
function postmasterOf(backendPid: number): number | undefined {
  if (!isPostgresProcess(backendPid)) return undefined;
  const parent = readProcStat(backendPid)?.ppid;
  return parent !== undefined && isPostgresProcess(parent) ? parent : undefined;
}

/** Children of `pid`: the kernel's list where it keeps one, else a walk of /proc. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(' ')
      .filter(Boolean)
      .map(Number);
  } catch {
    // Kernels without CONFIG_PROC_CHILDREN: one stat read per process on the machine.
    const children: number[] = [];
    for (const entry of readdirSync('/proc')) {
      if (/^\d+$/.test(entry) && readProcStat(Number(entry))?.ppid === pid) children.push(Number(entry));
    }
    return children;
  }
}

/**
 * A CPU-seconds counter of a postmaster and all its children that never goes backwards.
 *
 *   total = postmaster (utime + stime + cutime + cstime) + Σ live children (the same four)
 *
 * A backend that exits is reaped by the postmaster, whose cutime/cstime then hold its CPU,
 * so short-lived backends (a connection per request) are counted in full, which a per-pid
 * memory of live children would miss for the time since the last reading. The postmaster
 * is read before its children: a child reaped in between is then in neither sum, so the
 * total may dip for one reading; the counter holds its last value instead (it is never
 * above the truth, and never double counts). A new postmaster (the server restarted)
 * starts a new total, which readers see as a counter reset.
 */
export class PostmasterCpu {
  #postmaster: number | undefined;
  #lastTicks = 0;

  /** CPU seconds so far of `postmasterPid`'s tree; undefined when its stat cannot be read. */
  read(postmasterPid: number): number | undefined {
    const root = readProcStat(postmasterPid);
    if (!root) return undefined;
    let ticks = root.ownTicks + root.reapedTicks;
    for (const child of childrenOf(postmasterPid)) {
      const stat = readProcStat(child);
      // A child gone since the list was read: its time is in root's reaped ticks next time.
      if (stat) ticks += stat.ownTicks + stat.reapedTicks;
    }
    if (postmasterPid !== this.#postmaster) {
      this.#postmaster = postmasterPid;
      this.#lastTicks = ticks;
    } else {
      this.#lastTicks = Math.max(this.#lastTicks, ticks);
    }
    return this.#lastTicks / CLOCK_TICKS_PER_SEC;
  }
}
