// Child processes of a study (the service, the load engine) with their logs kept on disk.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';

/** A started child process whose output goes to a log file, with the last lines in memory. */
export interface LoggedChild {
  child: ChildProcess;
  /** Resolves with the exit code (or 128 + signal number) when the process ends. */
  exited: Promise<number>;
  /** The last lines it wrote to stdout/stderr. */
  tail(lines?: number): string;
  /** Resolves with the first stdout line matching `pattern` (or rejects if it exits first). */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
}

const SIGNALS: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Spawns `command args` with `env`, logging both streams to `logFile`. */
export function spawnLogged(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
): LoggedChild {
  const log = createWriteStream(logFile, { flags: 'a' });
  // A log that cannot be written (a full disk) loses its lines, not the study: the tail
  // kept in memory still goes into messages, and the disk watch ends the study.
  log.on('error', () => undefined);
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const recent: string[] = [];
  let stdoutBuffer = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  const remember = (text: string) => {
    for (const line of text.split('\n')) if (line.trim()) recent.push(line);
    if (recent.length > 200) recent.splice(0, recent.length - 200);
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    log.write(text);
    remember(text);
    stdoutBuffer += text;
    for (const waiter of [...waiters]) {
      const match = waiter.pattern.exec(stdoutBuffer);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
    if (stdoutBuffer.length > 65_536) stdoutBuffer = stdoutBuffer.slice(-4096);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    log.write(text);
    remember(text);
  });
  const exited = new Promise<number>((resolve) => {
    child.on('error', (error) => {
      remember(`failed to start ${command}: ${error.message}`);
      log.end();
      resolve(127);
    });
    child.on('exit', (code, signal) => {
      log.end();
      resolve(code ?? 128 + (SIGNALS[signal ?? ''] ?? 0));
    });
  });
  return {
    child,
    exited,
    tail: (lines = 15) => recent.slice(-lines).join('\n'),
    waitFor: (pattern, timeoutMs) =>
      new Promise((resolve, reject) => {
        const match = pattern.exec(stdoutBuffer);
        if (match) return resolve(match);
        const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          pattern,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
        });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`exited with code ${code}`));
        });
      }),
  };
}

/** Sends `signal`, then SIGKILL if the process has not exited within `graceMs`. */
export async function stopChild(
  child: LoggedChild,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 10_000,
): Promise<number> {
  if (child.child.exitCode === null && child.child.signalCode === null) {
    child.child.kill(signal);
    const timer = setTimeout(() => child.child.kill('SIGKILL'), graceMs);
    const code = await child.exited;
    clearTimeout(timer);
    return code;
  }
  return child.exited;
}
