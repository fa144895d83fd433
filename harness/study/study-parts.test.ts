// A study's parts stop in one order, and its ending is weighed from everything that happened.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideEnding, interruptedBy, type PartEnding, StudyParts } from './study-parts.ts';

const ending = (reason: PartEnding['reason']): PartEnding => ({ reason, detail: reason });

test('decideEnding: the signal, then the disk, then the database before the service it killed', () => {
  const cases: [string, (PartEnding | undefined)[], PartEnding['reason']][] = [
    // The load ran its plan and nothing else happened.
    ['plan done', [ending('completed')], 'completed'],
    // The service crashed because its database did: the database explains it.
    ['database, then service', [ending('service-died'), ending('database-died')], 'database-died'],
    // An engine that could not write its CSV died of the full disk.
    ['disk, then engine', [ending('generator-died'), undefined, ending('disk-full')], 'disk-full'],
    // Ctrl-C reaches the whole process group: the service's exit after it is not a death.
    ['signal, then service', [ending('interrupted'), ending('service-died')], 'interrupted'],
    ['a part did not start', [ending('failed')], 'failed'],
    ['service before the plan ended', [ending('completed'), ending('service-died')], 'service-died'],
  ];
  for (const [name, happened, reason] of cases) assert.equal(decideEnding(happened).reason, reason, name);
  assert.equal(decideEnding([]).reason, 'failed', 'nothing said why');
});

test('interruptedBy names the signal that aborted', () => {
  const controller = new AbortController();
  controller.abort('SIGTERM');
  assert.deepEqual(interruptedBy(controller.signal), { reason: 'interrupted', detail: 'stopped by SIGTERM' });
  assert.equal(interruptedBy(undefined).detail, 'interrupted');
});

test('parts stop last started first, each once, past one that fails; endings after the stop are not endings', async () => {
  const parts = new StudyParts();
  const stopped: string[] = [];
  let dieLater: (e: PartEnding) => void = () => undefined;
  const later = new Promise<PartEnding>((resolve) => {
    dieLater = resolve;
  });
  parts.add({ name: 'database', stop: async () => void stopped.push('database') });
  parts.add({
    name: 'service',
    ended: later,
    stop: async () => {
      stopped.push('service');
      throw new Error('it would not stop');
    },
  });
  parts.add({ name: 'load', stop: async () => void stopped.push('load') });
  const problems = await parts.stopAll();
  assert.deepEqual(stopped, ['load', 'service', 'database']);
  assert.deepEqual(problems, ['stopping the service failed: it would not stop']);
  dieLater(ending('service-died'));
  await later;
  assert.deepEqual(parts.endings, [], 'a part that ends while the study stops did not end it');
  assert.deepEqual(await parts.stopAll(), [], 'nothing is stopped twice');
  assert.deepEqual(stopped, ['load', 'service', 'database']);
});

test('the first ending a part reports, or the abort, ends the study', async () => {
  const parts = new StudyParts();
  parts.add({ name: 'meters', stop: async () => undefined });
  parts.add({ name: 'load', ended: Promise.resolve(ending('completed')), stop: async () => undefined });
  assert.equal((await parts.first()).reason, 'completed');
  assert.deepEqual(
    parts.endings.map((e) => e.reason),
    ['completed'],
  );

  const waiting = new StudyParts();
  waiting.add({ name: 'load', ended: new Promise(() => undefined), stop: async () => undefined });
  const controller = new AbortController();
  const first = waiting.first(controller.signal);
  controller.abort('SIGINT');
  assert.deepEqual(await first, { reason: 'interrupted', detail: 'stopped by SIGINT' });
});
