// Benchmark: what the per-step instrumentation costs the service, in CPU µs per request.
//
// Two statement services run side by side as child processes against one embedded
// PostgreSQL, identical except INSTRUMENT=on/off. A paced open-loop sender offers both the
// same rate in alternating rounds; each service's CPU comes from /proc/<pid>/stat
// (utime + stime), so the sender's own cost is not counted.
//
//   npm run bench:instrumentation -- [ratePerSec=100] [roundSeconds=10] [rounds=4]
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { openDatabase } from '../harness/db/database.ts';
import { processCpuUs } from '../lib/proc-stat.ts';

const [rate = 100, roundSeconds = 10, rounds = 4] = process.argv.slice(2).map(Number);
const bin = fileURLToPath(new URL('../bin/plateau.js', import.meta.url));

interface Service {
  name: string;
  child: ChildProcess;
  url: string;
  cpuUs: number;
  requests: number;
  failures: number;
}

function cpuUsOf(pid: number): number {
  const us = processCpuUs(pid);
  if (us === undefined) throw new Error(`process ${pid} is gone: cannot read its CPU`);
  return us;
}

async function startService(name: string, instrument: boolean, databaseUrl: string): Promise<Service> {
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...process.env, PORT: '0', DATABASE_URL: databaseUrl, INSTRUMENT: instrument ? 'on' : 'off' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`${name} exited ${code}`)));
  });
  return { name, child, url, cpuUs: 0, requests: 0, failures: 0 };
}

/** Sends `rate` requests/s for `seconds` to the service, paced from a 1 ms timer. */
async function round(service: Service, seconds: number): Promise<void> {
  const pid = service.child.pid!;
  const total = Math.round(rate * seconds);
  const cpuBefore = cpuUsOf(pid);
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  let sent = 0;
  while (sent < total) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate) + 1;
    for (; sent < Math.min(due, total); sent++) {
      inFlight.push(
        request(`${service.url}/statement?account=${sent}`, { headers: { 'x-load-step': `r${rate}` } })
          .then(async (res) => {
            await res.body.arrayBuffer();
            if (res.statusCode === 200) service.requests++;
            else service.failures++;
          })
          .catch(() => {
            service.failures++;
          }),
      );
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(inFlight);
  service.cpuUs += cpuUsOf(pid) - cpuBefore;
}

const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL });
const on = await startService('instrumented', true, db.url);
const off = await startService('bare', false, db.url);
try {
  process.stderr.write(
    `offering ${rate}/s, ${rounds} rounds of ${roundSeconds} s to each service, alternating\n`,
  );
  await round(on, 2); // warm-up: JIT, connections
  await round(off, 2);
  on.cpuUs = off.cpuUs = on.requests = off.requests = on.failures = off.failures = 0;
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? [on, off] : [off, on];
    for (const service of order) await round(service, roundSeconds);
  }
  const perRequest = (s: Service) => s.cpuUs / Math.max(1, s.requests + s.failures);
  const onUs = perRequest(on);
  const offUs = perRequest(off);
  const result = {
    ratePerSec: rate,
    requestsEach: on.requests + on.failures,
    failures: on.failures + off.failures,
    instrumentedCpuUsPerRequest: Math.round(onUs),
    bareCpuUsPerRequest: Math.round(offUs),
    extraUsPerRequest: Math.round(onUs - offUs),
    extraPct: Math.round(((onUs - offUs) / offUs) * 1000) / 10,
    node: process.version,
    cpus: (await import('node:os')).cpus().length,
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  on.child.kill('SIGTERM');
  off.child.kill('SIGTERM');
  await db.stop();
}
