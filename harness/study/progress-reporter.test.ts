import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StudyProgress } from './progress-line.ts';
import { ProgressReporter } from './progress-reporter.ts';

/** A load snapshot of `step` with `served` (enough to tell lines apart). */
const load = (step: string, served: number): StudyProgress => ({ phase: 'load', step, servedPerSec: served });

/** Feeds `events` (a snapshot at a time in ms, or finish) and returns what was written. */
function run(tty: boolean, events: ([number, StudyProgress] | 'finish')[], quiet = false): string {
  let now = 0;
  let out = '';
  const reporter = new ProgressReporter({ write: (t) => (out += t), tty, quiet, now: () => now });
  for (const event of events) {
    if (event === 'finish') reporter.finish();
    else {
      now = event[0];
      reporter.report(event[1]);
    }
  }
  return out;
}

test('without a terminal: phases once, a line every 10 s, and the last line of each step', () => {
  const cases: { name: string; events: ([number, StudyProgress] | 'finish')[]; lines: string[] }[] = [
    {
      name: 'phases print once each, load snapshots under 10 s apart print nothing until the step ends',
      events: [
        [0, { phase: 'starting the database' }],
        [100, { phase: 'starting the database' }],
        [1000, load('r020', 18)],
        [2000, load('r020', 20)],
        [3000, { phase: 'collecting the server side' }],
      ],
      lines: ['starting the database', 'step r020: served 20/s', 'collecting the server side'],
    },
    {
      name: 'a 25 s step: a line at 10 s and 20 s after the load began, then its last at the change',
      events: [
        ...Array.from({ length: 25 }, (_, i): [number, StudyProgress] => [
          1000 * (i + 1),
          load('r040', i + 1),
        ]),
        [26_000, load('r080', 70)],
        'finish',
      ],
      // first snapshot at 1 s; 11 s → served 11; 21 s → 21; the step's last (25) at the change
      lines: [
        'step r040: served 11/s',
        'step r040: served 21/s',
        'step r040: served 25/s',
        'step r080: served 70/s',
      ],
    },
    {
      name: 'a step whose last snapshot was just printed is not printed twice',
      events: [[0, load('r020', 1)], [10_000, load('r020', 10)], [11_000, load('r040', 40)], 'finish'],
      lines: ['step r020: served 10/s', 'step r040: served 40/s'],
    },
    {
      name: 'a notice gets its own line at once',
      events: [[0, { phase: 'rerunning with more VUs', notice: 'run x dropped starts' }]],
      lines: ['run x dropped starts', 'rerunning with more VUs'],
    },
  ];
  for (const { name, events, lines } of cases) {
    assert.deepEqual(run(false, events).split('\n').slice(0, -1), lines, name);
  }
});

test('on a terminal: the live line is rewritten each second; a finished step stays on screen', () => {
  const out = run(true, [
    [0, { phase: 'bundling the k6 script' }],
    [1000, load('r020', 19)],
    [2000, load('r020', 20)],
    [3000, load('r040', 38)],
    'finish',
  ]);
  assert.equal(
    out,
    [
      '\r\x1b[Kbundling the k6 script…',
      '\r\x1b[Kstep r020  served 19/s',
      '\r\x1b[Kstep r020  served 20/s',
      '\r\x1b[Kstep r020  served 20/s\n', // r020 ended: its last line stays
      '\r\x1b[Kstep r040  served 38/s',
      '\r\x1b[Kstep r040  served 38/s\n', // finish leaves the last step too
    ].join(''),
  );
});

test('a live line wider than the terminal is cut (a wrapped line cannot be rewritten)', () => {
  let out = '';
  const reporter = new ProgressReporter({ write: (t) => (out += t), tty: true, quiet: false, columns: 12 });
  reporter.report(load('r020', 19));
  assert.equal(out, '\r\x1b[Kstep r020 …');
});

test('--quiet writes nothing, on a terminal or not', () => {
  const events: ([number, StudyProgress] | 'finish')[] = [
    [0, { phase: 'starting', notice: 'a notice' }],
    [1000, load('r020', 20)],
    [30_000, load('r040', 40)],
    'finish',
  ];
  assert.equal(run(false, events, true), '');
  assert.equal(run(true, events, true), '');
});
