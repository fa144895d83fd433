// Compiles and starts examples/jvm-service, a service plateau did not write (the JDK's HTTP
// server, HikariCP, its meters under Micrometer's names), on Debian's jars, for suites about
// "any service".

import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { registerCleanup } from '../../harness/lifecycle.ts';
import { isExecutable } from './processes.ts';

const SOURCE_DIR = fileURLToPath(new URL('../../examples/jvm-service/src/', import.meta.url));
const MAIN_CLASS = 'OrdersService';
/** Where Debian installs libhikaricp-java, libpostgresql-jdbc-java and libslf4j-java; PLATEAU_JAVA_LIB overrides. */
const JAVA_LIB = process.env.PLATEAU_JAVA_LIB || '/usr/share/java';
/** The jars on the service's classpath, each a Debian symlink to its versioned jar. */
export const JVM_SERVICE_JARS = [
  'HikariCP.jar',
  'postgresql.jar',
  'slf4j-api.jar',
  'slf4j-simple.jar',
] as const;
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const LOG_LINES_KEPT = 400;

/**
 * JVM flags for a quick start of a short-lived service on a small shared machine (about
 * 0.6 s to `listening on` here), not for its peak throughput:
 * - `TieredStopAtLevel=1`: C1 only. C2 would spend CPU on the two shared cores compiling
 *   code for a service that lives seconds, and skew the CPU it reports.
 * - `Xss512k`: request threads need little stack; half the default reservation per thread.
 * - `UseSerialGC`: no GC worker threads competing with the request threads; with a heap
 *   this small its pauses are a few ms.
 * - `Xms32m`, `Xmx128m`: the service needs tens of MB; a small heap starts and collects fast.
 */
export const JVM_FLAGS = [
  '-XX:TieredStopAtLevel=1',
  '-Xss512k',
  '-XX:+UseSerialGC',
  '-Xms32m',
  '-Xmx128m',
] as const;

/** A running JVM service. */
export interface JvmService {
  /** Its base URL, `http://127.0.0.1:<port>`: `/orders`, `/healthz` and `/actuator/prometheus` are under it. */
  url: string;
  /** `GET /orders`, the URL a study targets. */
  ordersUrl: string;
  /** `/actuator/prometheus`, its meters in Prometheus text. */
  metricsUrl: string;
  pid: number;
  /** What it has printed so far (stdout and stderr, the last 400 lines), for a failing test's message. */
  log(): string;
  /** SIGTERM (it closes its pool), SIGKILL after 5 s; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Settings for {@link startJvmService}. */
export interface JvmServiceOptions {
  /** The PostgreSQL it uses, postgres://user:password@host:port/database. */
  databaseUrl: string;
  /** Its settings (THREADS, QUEUE_MAX, POOL_MAX, ACQUIRE_TIMEOUT_MS, QUERY_MS, CPU_MS, PORT: 0 unless given). */
  env?: Record<string, string | number>;
  /**
   * The CPUs it may run on, as taskset takes them (`1`): the JVM then counts only those
   * (system_cpu_count), so a CPU-bound test can give it a core of its own.
   */
  cpus?: string;
}

/** `name` in JAVA_HOME/bin when JAVA_HOME is set, else the first on PATH; undefined when none. */
function findTool(name: 'java' | 'javac'): string | undefined {
  const home = process.env.JAVA_HOME;
  if (home) return isExecutable(join(home, 'bin', name)) ? join(home, 'bin', name) : undefined;
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name))
    .find(isExecutable);
}

function classpathOf(classesDir?: string): string {
  return [...(classesDir ? [classesDir] : []), ...JVM_SERVICE_JARS.map((jar) => join(JAVA_LIB, jar))].join(
    delimiter,
  );
}

let availability: { reason: string | null; javacVersion: string } | undefined;

/**
 * Null when the service can be compiled and run here; otherwise one line saying what is
 * missing (javac, java, a jar), for a suite to print and skip with. `.ci/run` installs
 * openjdk-17-jdk-headless, libhikaricp-java, libpostgresql-jdbc-java and libslf4j-java.
 * Checked once per process.
 */
export function jvmAvailable(): string | null {
  availability ??= checkAvailability();
  return availability.reason;
}

function checkAvailability(): { reason: string | null; javacVersion: string } {
  const javac = findTool('javac');
  const java = findTool('java');
  const where = process.env.JAVA_HOME ? `in JAVA_HOME=${process.env.JAVA_HOME}/bin` : 'on PATH';
  if (!javac)
    return { reason: `no javac ${where}: apt-get install openjdk-17-jdk-headless`, javacVersion: '' };
  if (!java) return { reason: `no java ${where}: apt-get install openjdk-17-jdk-headless`, javacVersion: '' };
  const missing = JVM_SERVICE_JARS.filter((jar) => !existsSync(join(JAVA_LIB, jar)));
  if (missing.length > 0) {
    return {
      reason: `no ${missing.join(', ')} in ${JAVA_LIB}: apt-get install libhikaricp-java libpostgresql-jdbc-java libslf4j-java (or set PLATEAU_JAVA_LIB)`,
      javacVersion: '',
    };
  }
  const version = spawnSync(javac, ['-version'], { encoding: 'utf8', timeout: 20_000 });
  if (version.status !== 0) {
    return {
      reason: `${javac} -version failed: ${(version.stderr || String(version.error)).trim()}`,
      javacVersion: '',
    };
  }
  return { reason: null, javacVersion: `${version.stdout}${version.stderr}`.trim() };
}

let compiled: Promise<string> | undefined;

/**
 * Compiles examples/jvm-service/src with javac, once per process, into a directory under the
 * system temp dir named by a hash of the sources, javac's version and the classpath, and
 * resolves to it. A later process with the same sources reuses it. javac writes into a
 * private temporary directory that is then renamed into place, so test files compiling at
 * the same time never see half a directory: the first rename wins, the others discard their
 * copy. Rejects with javac's output when it fails, or with the reason when there is no JDK.
 */
export function compileJvmService(): Promise<string> {
  compiled ??= compile();
  return compiled;
}

async function compile(): Promise<string> {
  const missing = jvmAvailable();
  if (missing !== null) throw new Error(`cannot compile the JVM service: ${missing}`);
  const sources = readdirSync(SOURCE_DIR)
    .filter((name) => name.endsWith('.java'))
    .sort();
  const hash = createHash('sha256').update(availability!.javacVersion).update('\0').update(classpathOf());
  for (const name of sources)
    hash
      .update('\0')
      .update(name)
      .update('\0')
      .update(readFileSync(join(SOURCE_DIR, name)));
  const key = hash.digest('hex').slice(0, 16);
  const cacheRoot = join(tmpdir(), 'plateau-jvm-service');
  const classesDir = join(cacheRoot, key);
  const marker = join(classesDir, `${MAIN_CLASS}.class`);
  if (existsSync(marker)) return classesDir;
  await mkdir(cacheRoot, { recursive: true });
  const work = await mkdtemp(join(cacheRoot, `${key}.tmp-`));
  try {
    const args = ['-Xlint:all', '-encoding', 'UTF-8', '-d', work, '-cp', classpathOf(), ...sources];
    await new Promise<void>((resolve, reject) => {
      execFile(findTool('javac')!, args, { cwd: SOURCE_DIR, timeout: 120_000 }, (error, stdout, stderr) => {
        if (error) reject(new Error(`javac failed (${error.message.split('\n')[0]}):\n${stdout}${stderr}`));
        else resolve();
      });
    });
    await rename(work, classesDir);
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    // Renaming onto a directory another process has just put there fails (ENOTEMPTY): its
    // classes come from the same sources, so they are ours too.
    if (existsSync(marker)) return classesDir;
    throw error;
  }
  return classesDir;
}

/**
 * Compiles the service if needed and starts `java OrdersService` on 127.0.0.1 (PORT 0 unless
 * `env` says otherwise) with {@link JVM_FLAGS}, and resolves when it prints `listening on …`.
 * Its environment is PATH, JAVA_HOME and the settings given, nothing else of this process's.
 * Rejects with its log when it exits first (bad settings exit 2, an unreachable database 1)
 * or is not listening within 30 s (then it is killed). A started service is stopped by
 * `stop()`, and killed if the test process exits without calling it.
 */
export async function startJvmService(options: JvmServiceOptions): Promise<JvmService> {
  const classesDir = await compileJvmService();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '',
    ...(process.env.JAVA_HOME ? { JAVA_HOME: process.env.JAVA_HOME } : {}),
    PORT: '0',
    DATABASE_URL: options.databaseUrl,
    ...Object.fromEntries(Object.entries(options.env ?? {}).map(([name, value]) => [name, String(value)])),
  };
  const java = [findTool('java')!, ...JVM_FLAGS, '-cp', classpathOf(classesDir), MAIN_CLASS];
  const argv = options.cpus !== undefined ? ['taskset', '-c', options.cpus, ...java] : java;
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = watchOutput(child);
  const { stop, unregister } = stoppable(child);
  let url: string;
  try {
    url = await output.waitForReady(READY_TIMEOUT_MS);
  } catch (error) {
    await stop();
    unregister();
    throw new Error(`the JVM service did not start: ${(error as Error).message}\n${output.log()}`);
  }
  return {
    url,
    ordersUrl: `${url}/orders`,
    metricsUrl: `${url}/actuator/prometheus`,
    pid: child.pid!,
    log: output.log,
    stop: async () => {
      unregister();
      await stop();
    },
  };
}

/** A child's stdout and stderr as lines, and a wait for its `listening on <url>` line. */
function watchOutput(child: ChildProcess): {
  log: () => string;
  waitForReady: (timeoutMs: number) => Promise<string>;
} {
  const lines: string[] = [];
  let ready: ((url: string) => void) | undefined;
  const onLine = (line: string) => {
    lines.push(line);
    if (lines.length > LOG_LINES_KEPT) lines.shift();
  };
  createInterface({ input: child.stderr! }).on('line', onLine);
  createInterface({ input: child.stdout! }).on('line', (line) => {
    onLine(line);
    const match = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
    if (match) ready?.(match[1]!);
  });
  const waitForReady = (timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const done = (error: Error | undefined, url?: string) => {
        clearTimeout(timer);
        ready = undefined;
        child.off('close', onClose);
        child.off('error', onError);
        if (error) reject(error);
        else resolve(url!);
      };
      // 'close', not 'exit': it comes once stdout and stderr are drained, so the log is whole.
      const onClose = (code: number | null, signal: string | null) =>
        done(new Error(`it exited (${signal ?? `code ${code}`}) before it was listening`));
      const onError = (error: Error) => done(new Error(`java could not be run: ${error.message}`));
      const timer = setTimeout(
        () => done(new Error(`it was not listening within ${timeoutMs} ms`)),
        timeoutMs,
      );
      ready = (url) => done(undefined, url);
      child.once('close', onClose);
      child.once('error', onError);
    });
  return { log: () => lines.join('\n'), waitForReady };
}

/**
 * stop(): SIGTERM, then SIGKILL after 5 s, resolving once the child has exited; registered so
 * that a test process that ends without calling it kills the child.
 */
function stoppable(child: ChildProcess): { stop: () => Promise<void>; unregister: () => void } {
  // A child that could not be spawned has no pid and never emits 'exit'.
  const running = () => child.pid !== undefined && child.exitCode === null && child.signalCode === null;
  const exited = new Promise<void>((resolve) => {
    if (!running()) resolve();
    child.once('exit', () => resolve());
    child.once('error', () => {
      if (child.pid === undefined) resolve();
    });
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (running()) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(killer);
      }
    })();
    return stopping;
  };
  const unregister = registerCleanup({
    name: 'jvm-service',
    stop,
    stopSync: () => {
      if (running()) child.kill('SIGKILL');
    },
  });
  return { stop, unregister };
}
