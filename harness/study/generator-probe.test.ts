// The generator probe against a real busy process: a child spinning on one core must get that
// core, so this file runs with nothing beside it.
// test-run: solo
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { cpuPctBetween, GeneratorProbe } from './generator-probe.ts';

test('the probe reads a real busy process from /proc: about one core, and the machine at least that busy', async () => {
  // A child that spins for 1.6 s: one core's worth of CPU while it runs.
  const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 1600; while (Date.now() < end);']);
  const probe = new GeneratorProbe(child.pid!, 'k6', { cores: 2 }).start(200);
  await new Promise((resolve) => child.on('exit', resolve));
  const report = probe.stop();
  assert.equal(report.kind, 'plateau.generator-cpu');
  assert.equal(report.usableCores, 2);
  const busy = report.seconds.filter((s) => s.cpuPct > 50);
  assert.ok(busy.length >= 3, JSON.stringify(report.seconds));
  assert.ok(
    report.seconds.every((s) => (s.rssMb ?? 0) > 10),
    'a node process holds more than 10 MB',
  );
  for (const s of busy) {
    assert.ok(s.cpuPct <= 130, `one thread cannot use much more than a core: ${s.cpuPct}`);
    assert.ok(Math.abs(s.usablePct - s.cpuPct / 2) <= 0.1, JSON.stringify(s));
    assert.ok(s.machinePct === null || s.machinePct >= s.usablePct - 10, JSON.stringify(s));
  }
  const embedded = new GeneratorProbe(process.pid, 'embedded', { cores: 2 }).stop();
  assert.equal(embedded.usableCores, 1, "the engine's event loop is one core");
});

test('with engine workers each worker is read on its own, and the busiest is what the generator can use', async () => {
  // A coordinator that idles while its two workers spin, one on each core, for 1.6 s.
  const spin = 'const end = Date.now() + 1600; while (Date.now() < end);';
  const coordinator = spawn(process.execPath, [
    '-e',
    `const { spawn } = require('node:child_process');
     let left = 2;
     for (let i = 0; i < 2; i++) spawn(process.execPath, ['-e', ${JSON.stringify(spin)}]).on('exit', () => --left || process.exit(0));`,
  ]);
  const probe = new GeneratorProbe(coordinator.pid!, 'embedded', { workers: 2 }).start(200);
  await new Promise((resolve) => coordinator.on('exit', resolve));
  const report = probe.stop();
  assert.equal(report.workers, 2);
  assert.equal(report.usableCores, 2, 'a core a worker');
  const busy = report.seconds.filter((s) => s.workers?.length === 2 && s.usablePct > 50);
  assert.ok(busy.length >= 3, JSON.stringify(report.seconds));
  for (const s of busy) {
    assert.equal(s.usablePct, Math.max(...s.workers!), 'the busiest worker');
    assert.ok(s.cpuPct >= s.workers![0]! + s.workers![1]! - 0.2, 'the tree together');
  }
});

test('CPU between two readings is per process, % of one core; a process read once has none', () => {
  const pct = cpuPctBetween(
    {
      atMs: 1000,
      cpuUs: new Map([
        [1, 0],
        [2, 500_000],
        [3, 10],
      ]),
    },
    {
      atMs: 2000,
      cpuUs: new Map([
        [1, 250_000],
        [2, 1_500_000],
        [4, 99],
      ]),
    },
  );
  assert.deepEqual(
    [...pct],
    [
      [1, 25], // a quarter of a core over the second
      [2, 100], // a whole core
    ],
  );
});
