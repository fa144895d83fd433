// The generator probe against a real busy process: a child spinning on one core must get that
// core, so this file runs with nothing beside it.
// test-run: solo
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { GeneratorProbe } from './generator-probe.ts';

test('the probe reads a real busy process from /proc: about one core, and the machine at least that busy', async () => {
  // A child that spins for 1.6 s: one core's worth of CPU while it runs.
  const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 1600; while (Date.now() < end);']);
  const probe = new GeneratorProbe(child.pid!, 'k6', 2).start(200);
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
  const embedded = new GeneratorProbe(process.pid, 'embedded', 2).stop();
  assert.equal(embedded.usableCores, 1, "the engine's event loop is one core");
});
