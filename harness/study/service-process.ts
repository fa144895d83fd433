// Your service's life in a study: plateau.config's `service:` block (command, env, cwd, ready,
// stop), read into a plan, then the process it describes, started, awaited until ready,
// logged to service.log and stopped on every ending path.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import {
  type ConfigProblem,
  ERROR_CODES,
  PlateauError,
  type ServiceProcessRecord,
  type SourcedValue,
} from '../../contract/index.ts';
import { autogroupNice, setAutogroupNice } from '../../lib/autogroup.ts';
import { type Database, openDatabase } from '../db/database.ts';
import { registerCleanup } from '../lifecycle.ts';

/** The keys a `service:` block may hold. */
export const SERVICE_KEYS = ['command', 'cwd', 'env', 'ready', 'stop'] as const;

/** The defaults of a `service:` block, in one place. */
export const SERVICE_DEFAULTS = {
  /** How long the service may take to become ready, s. */
  readyTimeoutSeconds: 60,
  /** How often `ready.url` is asked, ms. */
  readyPollMs: 100,
  stopSignal: 'SIGTERM' as NodeJS.Signals,
  /** How long after the stop signal SIGKILL follows, s. */
  stopGraceSeconds: 10,
};

/** When the service counts as ready: a line of its output, or its URL's first 2xx. */
export type ServiceReady = ServiceProcessRecord['ready'];

/** How the service is stopped: `signal`, then SIGKILL after `graceSeconds`. */
export interface ServiceStop {
  signal: NodeJS.Signals;
  graceSeconds: number;
}

/** A `service:` block, validated: what to run, where, with which settings. */
export interface ServiceProcessConfig {
  /** The program, then its arguments (no shell). */
  command: string[];
  /** Absolute working directory. */
  cwd: string;
  /** Its settings, laid over plateau's environment. */
  env: Record<string, string>;
  ready: ServiceReady;
  stop: ServiceStop;
}

/** The service of a study plan: the block with `--set` applied, each env value with its source. */
export interface ServiceProcessPlan extends Omit<ServiceProcessConfig, 'env'> {
  env: Record<string, SourcedValue<string>>;
  /**
   * Whether plateau opens the study's database (`--db`, given as a flag or in the config)
   * before starting the service; an embedded one's URL is passed as DATABASE_URL.
   */
  database: boolean;
  /** `--set` keys the block's env did not have: added, and the study says so. */
  added: string[];
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Shell operators: with no shell they would reach the program as arguments. */
const SHELL_TOKENS = new Set(['&&', '||', '|', ';', '&', '>', '>>', '<', '2>&1']);
const SERVICE_EXAMPLE =
  'e.g. service: { command: "java -cp build OrdersService", env: { "PORT": "8080" }, ready: { "log": "started" } }';

/**
 * Splits a command line into arguments as a shell would, without running one: blanks
 * separate, '…' keeps its text, "…" keeps its text with \" and \\ escaped, and a \ outside
 * quotes escapes the next character. Undefined for an unterminated quote or trailing \.
 */
export function splitCommand(text: string): string[] | undefined {
  const args: string[] = [];
  let current = '';
  let started = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return undefined;
      current += text.slice(i + 1, end);
      started = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && (text[j + 1] === '"' || text[j + 1] === '\\')) j++;
        current += text[j];
      }
      if (j >= text.length) return undefined;
      started = true;
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= text.length) return undefined;
      current += text[++i];
      started = true;
    } else if (/\s/.test(c)) {
      if (started) args.push(current);
      current = '';
      started = false;
    } else {
      current += c;
      started = true;
    }
  }
  if (started) args.push(current);
  return args;
}

/** `java -cp build Orders` for messages: the arguments, quoted where they hold blanks. */
export function describeCommand(command: readonly string[]): string {
  return command.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`)).join(' ');
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads a `service:` block into a config, or returns every problem in it at once (missing
 * command, a regex that does not compile, a URL that is not http(s), unknown keys, …), each
 * named `service.<key>` with a hint. Pure: `cwd` (default `.`) is resolved against `baseDir`,
 * and nothing is checked on disk (planServiceProcess does that).
 */
export function parseServiceBlock(
  raw: unknown,
  baseDir: string = process.cwd(),
): { config: ServiceProcessConfig | undefined; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const problem = (setting: string, message: string, hint: string) =>
    problems.push({ setting: `service${setting ? `.${setting}` : ''}`, message, hint });
  if (!isObject(raw)) {
    problem('', `${JSON.stringify(raw)} is not an object`, SERVICE_EXAMPLE);
    return { config: undefined, problems };
  }
  for (const key of Object.keys(raw)) {
    if (!(SERVICE_KEYS as readonly string[]).includes(key))
      problem(key, 'is not a key of service', `use ${SERVICE_KEYS.join(', ')}`);
  }

  let command: string[] = [];
  if (raw.command === undefined) problem('command', 'is missing', 'the program to start, and its arguments');
  else if (typeof raw.command === 'string') {
    const split = splitCommand(raw.command);
    if (split === undefined)
      problem('command', `${JSON.stringify(raw.command)} has an unterminated quote`, 'close the quote');
    else if (split.length === 0) problem('command', 'is empty', SERVICE_EXAMPLE);
    else command = split;
    const operator = split?.find((a) => SHELL_TOKENS.has(a));
    if (operator !== undefined)
      problem(
        'command',
        `holds "${operator}", which would reach the program as an argument: plateau runs no shell`,
        'use cwd for the directory and env for settings, or run a shell yourself: ["sh", "-c", "…"]',
      );
  } else if (
    Array.isArray(raw.command) &&
    raw.command.length > 0 &&
    raw.command.every((a) => typeof a === 'string') &&
    raw.command[0] !== ''
  )
    command = raw.command as string[];
  else
    problem(
      'command',
      `${JSON.stringify(raw.command)} is not a command`,
      'a string ("node server.js") or a list of arguments (["node", "server.js"])',
    );

  let cwd = baseDir;
  if (typeof raw.cwd === 'string' && raw.cwd !== '') cwd = resolve(baseDir, raw.cwd);
  else if (raw.cwd !== undefined)
    problem(
      'cwd',
      `${JSON.stringify(raw.cwd)} is not a directory name`,
      'a path, relative to the config file',
    );

  const env: Record<string, string> = {};
  if (isObject(raw.env)) {
    for (const [key, value] of Object.entries(raw.env)) {
      if (!ENV_NAME.test(key))
        problem(
          `env.${key}`,
          'is not an environment variable name',
          'letters, digits and _, not first a digit',
        );
      else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        env[key] = String(value);
      else
        problem(`env.${key}`, `${JSON.stringify(value)} is not a value`, 'a string, a number or a boolean');
    }
  } else if (raw.env !== undefined)
    problem(
      'env',
      `${JSON.stringify(raw.env)} is not an object`,
      'e.g. env: { "POOL_MAX": "4", "PORT": "8080" }',
    );

  const ready = parseReady(raw.ready, problem);
  const stop = parseStop(raw.stop, problem);
  if (problems.length > 0 || !ready) return { config: undefined, problems };
  return { config: { command, cwd, env, ready, stop }, problems };
}

type Problem = (setting: string, message: string, hint: string) => void;

function parseReady(raw: unknown, problem: Problem): ServiceReady | undefined {
  const readyHint =
    'ready: { "log": "<regex a line of its output matches>" } or { "url": "http://127.0.0.1:8080/healthz" }';
  if (raw === undefined) {
    problem('ready', 'is missing: plateau cannot tell when the service can take load', readyHint);
    return undefined;
  }
  if (!isObject(raw)) {
    problem('ready', `${JSON.stringify(raw)} is not an object`, readyHint);
    return undefined;
  }
  let ok = true;
  for (const key of Object.keys(raw)) {
    if (!['log', 'url', 'timeoutSeconds'].includes(key)) {
      problem(`ready.${key}`, 'is not a key of ready', 'use log or url, and timeoutSeconds');
      ok = false;
    }
  }
  let timeoutSeconds = SERVICE_DEFAULTS.readyTimeoutSeconds;
  if (raw.timeoutSeconds !== undefined) {
    if (
      typeof raw.timeoutSeconds === 'number' &&
      raw.timeoutSeconds > 0 &&
      Number.isFinite(raw.timeoutSeconds)
    )
      timeoutSeconds = raw.timeoutSeconds;
    else {
      problem(
        'ready.timeoutSeconds',
        `${JSON.stringify(raw.timeoutSeconds)} is not accepted`,
        'a number of seconds above 0',
      );
      ok = false;
    }
  }
  if ((raw.log === undefined) === (raw.url === undefined)) {
    problem('ready', raw.log === undefined ? 'has neither log nor url' : 'has both log and url', readyHint);
    return undefined;
  }
  if (raw.log !== undefined) {
    const pattern = raw.log;
    if (typeof pattern !== 'string' || pattern === '') {
      problem(
        'ready.log',
        `${JSON.stringify(pattern)} is not a regular expression`,
        'e.g. "Started .* in [0-9.]+ seconds"',
      );
      return undefined;
    }
    try {
      RegExp(pattern);
    } catch (error) {
      problem(
        'ready.log',
        `/${pattern}/ does not compile: ${(error as Error).message}`,
        'escape ( [ { . * + ? with a backslash (\\\\ inside a JSON string) to match them as text',
      );
      return undefined;
    }
    return ok ? { log: pattern, timeoutSeconds } : undefined;
  }
  const url = raw.url;
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) {
    problem(
      'ready.url',
      `${JSON.stringify(url)} is not an http(s) URL`,
      'e.g. "http://127.0.0.1:8080/healthz", answering 2xx when ready',
    );
    return undefined;
  }
  return ok ? { url: url as string, timeoutSeconds } : undefined;
}

function parseStop(raw: unknown, problem: Problem): ServiceStop {
  const stop: ServiceStop = {
    signal: SERVICE_DEFAULTS.stopSignal,
    graceSeconds: SERVICE_DEFAULTS.stopGraceSeconds,
  };
  const signalHint = 'a signal name: SIGTERM (default), SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2, SIGKILL';
  const signal = (value: unknown, setting: string) => {
    const name = typeof value === 'string' ? value.toUpperCase().replace(/^(SIG)?/, 'SIG') : undefined;
    if (name && name in constants.signals) stop.signal = name as NodeJS.Signals;
    else problem(setting, `${JSON.stringify(value)} is not a signal`, signalHint);
  };
  if (raw === undefined) return stop;
  if (typeof raw === 'string') signal(raw, 'stop');
  else if (isObject(raw)) {
    for (const key of Object.keys(raw)) {
      if (!['signal', 'graceSeconds'].includes(key))
        problem(`stop.${key}`, 'is not a key of stop', 'use signal and graceSeconds');
    }
    if (raw.signal !== undefined) signal(raw.signal, 'stop.signal');
    if (raw.graceSeconds !== undefined) {
      if (typeof raw.graceSeconds === 'number' && raw.graceSeconds >= 0 && Number.isFinite(raw.graceSeconds))
        stop.graceSeconds = raw.graceSeconds;
      else
        problem(
          'stop.graceSeconds',
          `${JSON.stringify(raw.graceSeconds)} is not accepted`,
          'seconds before SIGKILL, 0 or more',
        );
    }
  } else
    problem(
      'stop',
      `${JSON.stringify(raw)} is not accepted`,
      `${signalHint}, or { "signal": "SIGINT", "graceSeconds": 30 }`,
    );
  return stop;
}

/**
 * A study's service: the block read by parseServiceBlock, then each `--set KEY=VALUE` laid
 * over its env (source `flag`; a key the env lacks is added and listed in `added`), and its
 * working directory checked on disk. `database`: whether plateau opens the study's database
 * for it. Every problem is returned at once.
 */
export function planServiceProcess(
  raw: unknown,
  set: readonly string[],
  database: boolean,
  baseDir: string = process.cwd(),
): { plan: ServiceProcessPlan | undefined; problems: ConfigProblem[] } {
  const { config, problems } = parseServiceBlock(raw, baseDir);
  const env: Record<string, SourcedValue<string>> = {};
  for (const [key, value] of Object.entries(config?.env ?? {})) env[key] = { value, source: 'config' };
  const added: string[] = [];
  for (const entry of set) {
    const eq = entry.indexOf('=');
    const key = eq < 0 ? entry : entry.slice(0, eq);
    if (eq < 0 || !ENV_NAME.test(key)) {
      problems.push({
        setting: '--set',
        message: `"${entry}" is not KEY=VALUE with KEY an environment variable name`,
        hint: 'e.g. --set POOL_MAX=8, a setting of the service in the config',
      });
      continue;
    }
    if (!(key in env)) added.push(key);
    env[key] = { value: entry.slice(eq + 1), source: 'flag' };
  }
  if (config && !(existsSync(config.cwd) && statSync(config.cwd).isDirectory())) {
    problems.push({
      setting: 'service.cwd',
      message: `${config.cwd} is not a directory`,
      hint: 'a directory relative to the config file (default: the directory of the config file)',
    });
  }
  if (!config || problems.length > 0) return { plan: undefined, problems };
  return { plan: { ...config, env, database, added }, problems };
}

/** What run.json records of a planned service. */
export function serviceProcessRecord(plan: ServiceProcessPlan): ServiceProcessRecord {
  return {
    command: plan.command,
    cwd: plan.cwd,
    env: plan.env,
    ready: plan.ready,
    stop: { signal: plan.stop.signal, graceSeconds: plan.stop.graceSeconds },
  };
}

/** A recorded service as a `service:` block again (what `plateau confirm` reruns). */
export function serviceBlockFromRecord(record: ServiceProcessRecord): Record<string, unknown> {
  return {
    command: record.command,
    cwd: record.cwd,
    env: Object.fromEntries(Object.entries(record.env).map(([k, v]) => [k, v.value])),
    ready: record.ready,
    stop: record.stop,
  };
}

/** How a service process ended. */
export interface ServiceExit {
  /** Its exit code, or null when a signal ended it (or it never started). */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why it could not be started (spawn's error), when it was not. */
  error?: string;
}

/** `exit code 1`, `killed by SIGKILL`, or `could not start: spawn foo ENOENT`. */
export function describeExit(exit: ServiceExit): string {
  if (exit.error !== undefined) return `could not start: ${exit.error}`;
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exit code ${exit.code}`;
}

/** A started service process. */
/**
 * Gives the service's new session (it is started `detached`, so that it stops as a process
 * group) plateau's own CPU priority: on a kernel with autogroups it would otherwise get a group
 * of its own at nice 0, and a study run at a lower or higher priority would leave its service
 * out of it.
 */
function keepCpuPriority(pid: number | undefined): void {
  const nice = autogroupNice();
  if (pid !== undefined && nice !== undefined && nice !== 0) setAutogroupNice(pid, nice);
}

export interface RunningService {
  /** The command as a line, for messages. */
  readonly command: string;
  readonly pid: number | undefined;
  /** Resolves when the process ends (on its own or stopped). */
  readonly exited: Promise<ServiceExit>;
  /** The last lines of its stdout and stderr, interleaved as written. */
  tail(lines?: number): string;
  /**
   * Why the study cannot go on: set when the process ended on its own after it was ready;
   * undefined while it runs and when plateau stopped it.
   */
  death(): PlateauError | undefined;
  /** Sends the stop signal to its process group, SIGKILL after the grace; idempotent. */
  stop(): Promise<ServiceExit>;
}

/**
 * Starts `config.command` in its own process group (so that the stop signal reaches what it
 * starts in turn, and a Ctrl-C on plateau's terminal reaches plateau alone, which stops the
 * load before the service), with `config.env` over `baseEnv`, both streams appended to
 * `logFile`, and resolves once it is ready: the first line of its stdout/stderr matching
 * `ready.log`, or the first 2xx of `ready.url`, asked every `pollMs`. A process that exits
 * first, or is not ready within `ready.timeoutSeconds`, or a `signal` that aborts the wait,
 * stops it and rejects with a PlateauError naming the command, how it ended and its log's last
 * lines. After it is ready, ending on its own calls `onDeath` (and sets `death()`). It is
 * registered with the lifecycle until stopped, so no ending path leaves it behind.
 */
export async function startServiceProcess(
  config: ServiceProcessConfig,
  options: {
    logFile: string;
    baseEnv?: NodeJS.ProcessEnv;
    signal?: AbortSignal;
    onDeath?: (error: PlateauError) => void;
    pollMs?: number;
  },
): Promise<RunningService> {
  const line = describeCommand(config.command);
  const logName = options.logFile;
  const log = createWriteStream(logName, { flags: 'a' });
  // A full disk loses log lines, never the study (the tail in memory still names them).
  log.on('error', () => undefined);
  const child = spawn(config.command[0]!, config.command.slice(1), {
    cwd: config.cwd,
    env: { ...(options.baseEnv ?? process.env), ...config.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  keepCpuPriority(child.pid);
  const recent: string[] = [];
  const lineListeners = new Set<(text: string) => void>();
  const onLine = (text: string) => {
    recent.push(text);
    if (recent.length > 200) recent.splice(0, recent.length - 200);
    for (const listener of lineListeners) listener(text);
  };
  for (const stream of [child.stdout!, child.stderr!]) {
    // Decoded as a stream, so a character split across two reads stays whole.
    stream.setEncoding('utf8');
    let partial = '';
    stream.on('data', (chunk: string) => {
      log.write(chunk);
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      // Output that never ends its line is still read, 64 KiB at a time.
      while (partial.length > 65_536) {
        lines.push(partial.slice(0, 65_536));
        partial = partial.slice(65_536);
      }
      for (const l of lines) onLine(l.replace(/\r$/, ''));
    });
    stream.on('end', () => {
      if (partial) onLine(partial);
      partial = '';
    });
  }
  const exited = new Promise<ServiceExit>((done) => {
    child.on('error', (error) => {
      onLine(`plateau: could not start ${line}: ${error.message}`);
      done({ code: null, signal: null, error: error.message });
    });
    child.on('exit', (code, signal) => done({ code, signal }));
  });
  const closed = new Promise<void>((done) => child.on('close', () => done()));
  const tail = (lines = 15) =>
    recent
      .filter((l) => l.trim())
      .slice(-lines)
      .join('\n');

  let stopping: Promise<ServiceExit> | undefined;
  let ready = false;
  let death: PlateauError | undefined;
  const stop = (): Promise<ServiceExit> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        killGroup(child, config.stop.signal);
        const timer = setTimeout(() => killGroup(child, 'SIGKILL'), config.stop.graceSeconds * 1000);
        await exited;
        clearTimeout(timer);
      }
      const exit = await exited;
      // What it started and left behind in its group goes with it.
      killGroup(child, 'SIGKILL');
      // The pipes close once every holder is gone; one that left the group cannot hold the log open.
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000).unref())]);
      await new Promise<void>((done) => log.end(done));
      unregister();
      return exit;
    })();
    return stopping;
  };
  const unregister = registerCleanup({
    name: `your service (${line})`,
    stop: async () => void (await stop()),
    stopSync: () => killGroup(child, 'SIGKILL'),
  });
  void exited.then((exit) => {
    if (!ready || stopping) return;
    death = new PlateauError(
      ERROR_CODES.CHILD_FAILED,
      `your service \`${line}\` ended during the study (${describeExit(exit)})`,
      {
        hint: `${logName} ends with:\n${tail() || '(nothing)'}`,
      },
    );
    options.onDeath?.(death);
  });

  const failure = await waitReady(config, {
    exited,
    lineListeners,
    signal: options.signal,
    pollMs: options.pollMs,
  });
  if (failure) {
    const exit = await stop();
    const ended = failure.kind === 'exited' ? '' : ` (stopped: ${describeExit(exit)})`;
    const message =
      failure.kind === 'exited'
        ? `your service \`${line}\` ended before it was ready (${describeExit(exit)})`
        : failure.kind === 'aborted'
          ? `interrupted while waiting for your service \`${line}\` to be ready${ended}`
          : `your service \`${line}\` was not ready within ${config.ready.timeoutSeconds} s: ${failure.why}${ended}`;
    const advice =
      failure.kind === 'timeout'
        ? 'fix service.ready, or raise service.ready.timeoutSeconds if it is only slow to start'
        : exit.error !== undefined
          ? `is ${config.command[0]} on PATH, or a path relative to ${config.cwd}?`
          : `run the command yourself in ${config.cwd} to see why`;
    throw new PlateauError(
      failure.kind === 'aborted' ? ERROR_CODES.INTERRUPTED : ERROR_CODES.CHILD_FAILED,
      message,
      { hint: `${logName} ends with:\n${tail() || '(nothing)'}\n${advice}` },
    );
  }
  ready = true;
  return { command: line, pid: child.pid, exited, tail, death: () => death, stop };
}

/** Why the wait for readiness ended without it. */
type NotReady = { kind: 'exited' } | { kind: 'timeout'; why: string } | { kind: 'aborted' };

/** Resolves undefined when the service is ready, else why not; never rejects. */
async function waitReady(
  config: ServiceProcessConfig,
  options: {
    exited: Promise<ServiceExit>;
    lineListeners: Set<(text: string) => void>;
    signal: AbortSignal | undefined;
    pollMs: number | undefined;
  },
): Promise<NotReady | undefined> {
  const { ready } = config;
  let settled = false;
  const cleanups: (() => void)[] = [];
  const outcome = await new Promise<NotReady | undefined>((done) => {
    const finish = (result: NotReady | undefined) => {
      if (settled) return;
      settled = true;
      done(result);
    };
    void options.exited.then(() => finish({ kind: 'exited' }));
    if (options.signal?.aborted) return finish({ kind: 'aborted' });
    const onAbort = () => finish({ kind: 'aborted' });
    options.signal?.addEventListener('abort', onAbort, { once: true });
    cleanups.push(() => options.signal?.removeEventListener('abort', onAbort));
    let lastAnswer = 'it was never reached';
    const timer = setTimeout(
      () =>
        finish({
          kind: 'timeout',
          why:
            'log' in ready
              ? `no line of its output matched /${ready.log}/`
              : `${ready.url} never answered 2xx (last: ${lastAnswer})`,
        }),
      ready.timeoutSeconds * 1000,
    );
    cleanups.push(() => clearTimeout(timer));
    if ('log' in ready) {
      const pattern = new RegExp(ready.log);
      const listener = (text: string) => {
        if (pattern.test(text)) finish(undefined);
      };
      options.lineListeners.add(listener);
      cleanups.push(() => options.lineListeners.delete(listener));
      return;
    }
    const pollMs = options.pollMs ?? SERVICE_DEFAULTS.readyPollMs;
    const poll = async () => {
      while (!settled) {
        try {
          const res = await request(ready.url, { headersTimeout: 2000, bodyTimeout: 2000 });
          await res.body.dump();
          if (res.statusCode >= 200 && res.statusCode < 300) return finish(undefined);
          lastAnswer = `status ${res.statusCode}`;
        } catch (error) {
          lastAnswer = (error as Error).message || String(error);
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    };
    void poll();
  });
  for (const cleanup of cleanups) cleanup();
  return outcome;
}

/** Sends `signal` to the child's process group; a group already gone is fine. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') child.kill(signal);
  }
}

/** A study's service and the database plateau opened for it, if any. */
export interface StudyService {
  service: RunningService;
  database: Database | undefined;
  /**
   * Stops the service, then the database (idempotent). Resolves with why the study failed
   * when the service ended on its own during it, else undefined.
   */
  stop(): Promise<PlateauError | undefined>;
}

/**
 * Starts a study's service: first the database when the plan says plateau opens one
 * (`db`: 'embedded' or a URL; an embedded one's URL goes into DATABASE_URL unless the
 * service's env sets it), then the service, logging to `<dir>/service.log`, ready before
 * this resolves. A failure stops what was started and rethrows (see startServiceProcess).
 */
export async function startStudyService(
  plan: ServiceProcessPlan,
  options: {
    db: string;
    dir: string;
    signal?: AbortSignal;
    progress: (p: { phase: string; notice?: string }) => void;
    onDeath?: (error: PlateauError) => void;
  },
): Promise<StudyService> {
  if (plan.added.length > 0) {
    options.progress({
      phase: 'starting your service',
      notice: `--set ${plan.added.join(', ')}: not in the env of the config's service, added to it`,
    });
  }
  const env = Object.fromEntries(Object.entries(plan.env).map(([k, v]) => [k, v.value]));
  let database: Database | undefined;
  let unregisterDb: () => void = () => undefined;
  if (plan.database) {
    options.progress({ phase: 'starting the database' });
    database = await openDatabase({ databaseUrl: options.db === 'embedded' ? undefined : options.db });
    unregisterDb = registerCleanup({ name: 'database', stop: () => database!.stop() });
    // Only a database plateau owns is handed over: a URL you gave is yours to pass.
    if (database.info.kind === 'embedded' && env.DATABASE_URL === undefined) env.DATABASE_URL = database.url;
  }
  const stopDatabase = async () => {
    await database?.stop();
    unregisterDb();
  };
  options.progress({ phase: `starting your service (${describeCommand(plan.command)})` });
  let service: RunningService;
  try {
    service = await startServiceProcess(
      { command: plan.command, cwd: plan.cwd, env, ready: plan.ready, stop: plan.stop },
      {
        logFile: join(options.dir, 'service.log'),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onDeath ? { onDeath: options.onDeath } : {}),
      },
    );
  } catch (error) {
    await stopDatabase();
    throw error;
  }
  let stopped: Promise<PlateauError | undefined> | undefined;
  return {
    service,
    database,
    stop: () => {
      stopped ??= (async () => {
        await service.stop();
        await stopDatabase();
        return service.death();
      })();
      return stopped;
    },
  };
}
