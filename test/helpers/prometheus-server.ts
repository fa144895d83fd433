// Debian's Prometheus server for tests: one job scraping given targets once a second, its
// storage in a temporary directory, on a free loopback port; stopped and deleted after.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { request } from 'undici';
import { stringify } from 'yaml';
import { freeLoopbackPort } from '../../harness/study/load-api.ts';

/** A running Prometheus server. */
export interface PrometheusServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  job: string;
  /** Resolves once `target` (`host:port`) has been scraped at least `times` times; rejects after `timeoutMs`. */
  scraped(target: string, times: number, timeoutMs?: number): Promise<void>;
  /** What the server logged so far (for a failing test's message). */
  log(): string;
  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and deletes its directory. */
  stop(): Promise<void>;
}

export interface PrometheusServerOptions {
  /** Targets of the one job, `host:port`. */
  targets: string[];
  /** Default `orders`. */
  job?: string;
  /** Default `/metrics`. */
  metricsPath?: string;
  /** Resolve only once this target (of the first job) has been scraped `times` times. */
  awaitScrapes?: { target: string; times: number };
  /**
   * More jobs on the same server, each scraped at the same 1 s interval: other services a
   * `--prometheus-match` must leave out, as a shared nightly Prometheus holds them.
   */
  otherJobs?: { job: string; targets: string[]; metricsPath?: string }[];
}

/** PROMETHEUS_BIN, then `prometheus` on PATH, then Debian's /usr/bin/prometheus. */
function findPrometheus(): string | undefined {
  const fromEnv = process.env.PROMETHEUS_BIN;
  if (fromEnv) return fromEnv;
  const candidates = [
    ...(process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'prometheus')),
    '/usr/bin/prometheus',
  ];
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Null when a Prometheus server can be started here; otherwise one line saying why not, for a
 * suite to print and skip on (as test/real-k6.test.ts does for k6).
 */
export function prometheusAvailable(): string | null {
  const bin = findPrometheus();
  if (!bin) return "no prometheus: install Debian's prometheus package (.ci/run does) or set PROMETHEUS_BIN";
  try {
    execFileSync(bin, ['--version'], { stdio: 'pipe', timeout: 10_000 });
    return null;
  } catch (error) {
    return `${bin} --version failed: ${(error as Error).message.split('\n')[0]}`;
  }
}

/** `prometheus, version 2.42.0+ds (…)`: the first line of `--version`, for a suite's header. */
export function prometheusVersion(): string {
  const bin = findPrometheus();
  if (!bin) return 'none';
  return execFileSync(bin, ['--version'], { encoding: 'utf8', stdio: 'pipe' }).split('\n')[0]!.trim();
}

/**
 * Starts Prometheus with `global.scrape_interval: 1s`, one job scraping `targets` and any
 * `otherJobs`, on a free 127.0.0.1 port (another attempt on a new port if that one was taken
 * meanwhile), and resolves once `/-/ready` answers 200 and, with `awaitScrapes`, once that
 * target has been scraped that many times. Rejects with the server's log when it does not
 * come up in 30 s.
 */
export async function startPrometheusServer(options: PrometheusServerOptions): Promise<PrometheusServer> {
  const bin = findPrometheus();
  if (!bin) throw new Error(prometheusAvailable() ?? 'no prometheus');
  const job = options.job ?? 'orders';
  const dir = await mkdtemp(join(tmpdir(), 'plateau-prometheus-'));
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    scrape_configs: [
      {
        job_name: job,
        metrics_path: options.metricsPath ?? '/metrics',
        static_configs: [{ targets: options.targets }],
      },
      ...(options.otherJobs ?? []).map((other) => ({
        job_name: other.job,
        metrics_path: other.metricsPath ?? '/metrics',
        static_configs: [{ targets: other.targets }],
      })),
    ],
  };
  await writeFile(join(dir, 'prometheus.yml'), stringify(config));
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freeLoopbackPort();
    try {
      const server = await launch(bin, dir, port, job);
      if (options.awaitScrapes) {
        await server.scraped(options.awaitScrapes.target, options.awaitScrapes.times).catch(async (error) => {
          await server.stop();
          throw error;
        });
      }
      return server;
    } catch (error) {
      lastError = error as Error;
      // Only a port taken between choosing and binding is worth another try.
      if (!/address already in use/.test(lastError.message)) break;
    }
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError ?? new Error('prometheus did not start');
}

async function launch(bin: string, dir: string, port: number, job: string): Promise<PrometheusServer> {
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    bin,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, `data-${port}`)}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // Debian's defaults point at /etc and /usr/share, which a test does not need.
      `--web.console.templates=${dir}`,
      `--web.console.libraries=${dir}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let output = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = once(child, 'exit');
  const stop = async () => {
    await stopChild(child, exited);
    await rm(dir, { recursive: true, force: true });
  };
  const server: PrometheusServer = {
    url,
    job,
    log: () => output,
    stop,
    scraped: (target, times, timeoutMs = 30_000) =>
      scrapedTimes(url, job, target, times, timeoutMs, () => output),
  };
  try {
    await ready(child, url, () => output);
  } catch (error) {
    await stopChild(child, exited);
    throw error;
  }
  return server;
}

/** Waits for the log line that says the server is ready, then checks `/-/ready` answers 200. */
async function ready(child: ChildProcess, url: string, log: () => string): Promise<void> {
  const signal = AbortSignal.timeout(30_000);
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (log().includes('Server is ready to receive web requests')) done(null);
    };
    const onExit = (code: number | null) =>
      done(new Error(`prometheus exited with ${code} before it was ready:\n${log()}`));
    const onAbort = () => done(new Error(`prometheus was not ready within 30 s:\n${log()}`));
    const done = (error: Error | null) => {
      child.stderr!.off('data', onData);
      child.off('exit', onExit);
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    child.stderr!.on('data', onData);
    child.once('exit', onExit);
    signal.addEventListener('abort', onAbort);
    onData();
  });
  const res = await request(`${url}/-/ready`);
  await res.body.dump();
  if (res.statusCode !== 200)
    throw new Error(`prometheus said ready in its log but /-/ready answered ${res.statusCode}`);
}

/** Polls `count_over_time(up{…}[1h])` every 200 ms: the number of scrapes of the target so far. */
async function scrapedTimes(
  url: string,
  job: string,
  target: string,
  times: number,
  timeoutMs: number,
  log: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const query = `count_over_time(up{job="${job}",instance="${target}"}[1h])`;
  let seen = 0;
  for (;;) {
    const res = await request(`${url}/api/v1/query?${new URLSearchParams({ query })}`);
    const body = (await res.body.json()) as { data?: { result?: { value?: [number, string] }[] } };
    seen = Number(body.data?.result?.[0]?.value?.[1] ?? 0);
    if (seen >= times) return;
    if (Date.now() > deadline) {
      throw new Error(
        `prometheus scraped ${target} ${seen} times in ${timeoutMs} ms, not ${times}:\n${log()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
