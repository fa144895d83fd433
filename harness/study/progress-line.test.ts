import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainLine, type StudyProgress, ttyLine } from './progress-line.ts';

const full: StudyProgress = {
  phase: 'load',
  step: 'r080',
  secondsLeft: 12,
  offeredPerSec: 80,
  sentPerSec: 79.6,
  servedPerSec: 66,
  p95Ms: 412.3,
  shedPerSec: 0,
  droppedPerSec: 0,
  checkedOut: 3.98,
  poolMax: 4,
  waiting: 29.5,
};

test('one snapshot gives the live line and the plain line, each figure in the same order', () => {
  const cases: { name: string; p: StudyProgress; tty: string; plain: string }[] = [
    {
      name: 'every figure, from the plan, the generator and the service',
      p: full,
      tty: 'step r080  12 s left  offered 80/s  sent 80/s  served 66/s  service p95 412 ms  shed 0/s  dropped 0/s  pool 4.0/4  waiting 29.5',
      plain:
        'step r080, 12 s left: offered 80/s, sent 80/s, served 66/s, service p95 412 ms, shed 0/s, dropped 0/s, pool 4.0 of 4 checked out, waiting 29.5',
    },
    {
      name: 'a target without /steps/live: only the plan and the generator',
      p: {
        phase: 'load',
        step: 'r020',
        secondsLeft: 40,
        offeredPerSec: 20,
        sentPerSec: 19.96,
        droppedPerSec: 2.5,
      },
      tty: 'step r020  40 s left  offered 20/s  sent 20/s  dropped 2.5/s',
      plain: 'step r020, 40 s left: offered 20/s, sent 20/s, dropped 2.5/s',
    },
    {
      name: 'a generator not answering yet: only the service; a pool of unknown size',
      p: {
        phase: 'load',
        step: 'r040',
        secondsLeft: 3,
        servedPerSec: 4,
        shedPerSec: 1,
        p95Ms: 8.26,
        checkedOut: 1,
        waiting: 0,
      },
      tty: 'step r040  3 s left  served 4/s  service p95 8.3 ms  shed 1/s  pool 1.0  waiting 0.0',
      plain:
        'step r040, 3 s left: served 4/s, service p95 8.3 ms, shed 1/s, pool 1.0 checked out, waiting 0.0',
    },
    {
      name: 'a second without responses has no p95; multi-second ones read in s',
      p: { phase: 'load', step: 'recovery', secondsLeft: 0, p95Ms: null },
      tty: 'step recovery  0 s left  service p95 –',
      plain: 'step recovery, 0 s left: service p95 –',
    },
    {
      name: 'a slow queue',
      p: { phase: 'load', step: 'r120', p95Ms: 12_345 },
      tty: 'step r120  service p95 12.3 s',
      plain: 'step r120: service p95 12.3 s',
    },
    {
      name: 'nothing known yet but the time',
      p: { phase: 'load', secondsLeft: 58 },
      tty: 'load  58 s left',
      plain: 'load, 58 s left',
    },
    {
      name: 'another phase',
      p: { phase: 'starting the database' },
      tty: 'starting the database…',
      plain: 'starting the database',
    },
  ];
  for (const { name, p, tty, plain } of cases) {
    assert.equal(ttyLine(p), tty, name);
    assert.equal(plainLine(p), plain, name);
  }
});
