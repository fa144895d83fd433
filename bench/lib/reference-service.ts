// The reference service as a child process for a benchmark, once it is listening.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/plateau.js', import.meta.url));

/**
 * Starts `plateau serve` on a free port against `databaseUrl` with `env` laid over the
 * process's, and resolves with its URL once it prints `listening on`.
 */
export async function startReferenceService(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...process.env, PORT: '0', DATABASE_URL: databaseUrl, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`plateau serve exited (${code}) before listening`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
  });
  return { child, url };
}
