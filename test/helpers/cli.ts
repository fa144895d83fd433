// Runs the plateau CLI as a child process and collects what it printed.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** `bin/plateau.js` of this checkout. */
export const PLATEAU_BIN = fileURLToPath(new URL('../../bin/plateau.js', import.meta.url));

/** Runs `plateau args…` (in `cwd`, as a user in a project directory); `onStart` gets the child (to send signals). */
export function plateau(
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    onStart?: (child: ChildProcess) => void;
    /** A command the CLI runs under, e.g. `['taskset', '-c', '0']` to keep it and its children on one core. */
    prefix?: string[];
  } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const argv = [...(options.prefix ?? []), process.execPath, PLATEAU_BIN, ...args];
  const child = spawn(argv[0]!, argv.slice(1), {
    env: { ...process.env, ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  options.onStart?.(child);
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** `plateau engine run <script> -q …args`, with extra environment variables. */
export const engineRun = (script: string, args: string[], env?: NodeJS.ProcessEnv) =>
  plateau(['engine', 'run', script, '-q', ...args], env ? { env } : {});
