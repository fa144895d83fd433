// The Prometheus server source's plan and conversions, and the servers it cannot use (one
// that is not there, one that is not Prometheus). The real server is in test/prometheus-source.test.ts.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { isPlateauError, type MeterSample, type MeterScrape } from '../../contract/index.ts';
import { startTestServer } from '../../test/helpers/test-server.ts';
import { freeLoopbackPort } from '../study/load-api.ts';
import { MeterLog, readMeterLog } from './meter-source.ts';
import {
  addMatrix,
  checkPrometheusMatch,
  familySelector,
  labelMatchers,
  planQueryWindows,
  prometheusDurationSeconds,
  readPrometheusServer,
} from './prometheus-server.ts';

const dir = await mkdtemp(join(tmpdir(), 'plateau-prometheus-source-'));
after(() => rm(dir, { recursive: true, force: true }));

test('label matcher blocks: what is accepted, and how the family selector is built', () => {
  const good: [string, string[]][] = [
    // the whole server
    ['', []],
    ['{}', []],
    ['{job="orders"}', ['job="orders"']],
    // spaces, every operator, the three quotes, an escaped quote, a trailing comma
    [
      ' { job = "orders" , instance=~"a.*", env!=\'dev\', pod!~`x-\\d+`, note="say \\"hi\\"", } ',
      ['job="orders"', 'instance=~"a.*"', "env!='dev'", 'pod!~`x-\\d+`', 'note="say \\"hi\\""'],
    ],
  ];
  for (const [match, matchers] of good) {
    assert.deepEqual(labelMatchers(match), matchers, match);
    assert.equal(checkPrometheusMatch(match, '--prometheus-match'), null, match);
  }
  const bad: [string, RegExp][] = [
    // no braces: a job name alone
    ['orders', /must start with \{/],
    ['job="orders"', /must start with \{/],
    ['{job="orders"', /must end with \}/],
    ['{job=orders}', /quoted value was expected after job=/],
    ['{job=="orders"}', /quoted value was expected/],
    ['{job="orders" instance="a"}', /, or \} was expected/],
    ['{9job="x"}', /label name was expected/],
    ['{job="orders"}{x="y"}', /unexpected text after \}/],
    ['{job="unterminated}', /quoted value was expected/],
  ];
  for (const [match, words] of bad) {
    const problem = checkPrometheusMatch(match, '--prometheus-match');
    assert.ok(problem, match);
    assert.equal(problem.setting, '--prometheus-match');
    assert.match(problem.message, words, match);
    assert.match(problem.hint, /\{job="orders"\}/);
  }
  assert.equal(
    familySelector(['hikaricp_connections_active', 'process_cpu_seconds_total'], ['job="orders"']),
    '{__name__=~"hikaricp_connections_active|process_cpu_seconds_total",job="orders"}',
  );
  assert.equal(familySelector(['up'], []), '{__name__=~"up"}');
});

test('a match that is not a label matcher block is a PlateauError before any request', async () => {
  await assert.rejects(
    readPrometheusServer({
      url: 'http://127.0.0.1:9',
      match: 'job=orders',
      names: ['up'],
      expressions: [],
      startMs: 0,
      endMs: 1000,
      log: new MeterLog(join(dir, 'never.ndjson')),
    }),
    (error) =>
      isPlateauError(error) &&
      error.code === 'PLATEAU_INVALID_CONFIG' &&
      /--prometheus-match: "job=orders" is not a label matcher block/.test(error.message),
  );
});

test('Prometheus durations in seconds', () => {
  const cases: [string, number | null][] = [
    ['1s', 1],
    ['15s', 15],
    ['500ms', 0.5],
    ['1m30s', 90],
    ['2h', 7200],
    ['1d', 86_400],
    ['', null],
    ['fast', null],
    ['1.5s', null],
  ];
  for (const [text, seconds] of cases) assert.equal(prometheusDurationSeconds(text), seconds, text);
});

test('a long window is split so no query asks for more than 10,000 steps, none read twice', () => {
  // 10 s at 1 s: one query, 11 evaluations.
  assert.deepEqual(planQueryWindows(1_000_000, 1_010_000, 1), [{ startSeconds: 1000, endSeconds: 1010 }]);
  // The end before the start: nothing to ask.
  assert.deepEqual(planQueryWindows(2000, 1000, 1), []);
  // 4 h at 1 s: 14,401 evaluations in two queries, the second starting one step after the first ends.
  const windows = planQueryWindows(0, 4 * 3_600_000, 1);
  assert.deepEqual(windows, [
    { startSeconds: 0, endSeconds: 9999 },
    { startSeconds: 10_000, endSeconds: 14_400 },
  ]);
  // At 15 s a day is one query (5,761 evaluations).
  assert.equal(planQueryWindows(0, 86_400_000, 15).length, 1);
  for (const w of planQueryWindows(0, 30 * 86_400_000, 1)) {
    assert.ok((w.endSeconds - w.startSeconds) / 1 + 1 <= 10_000);
  }
});

test('a matrix answer becomes samples by time, NaN and ±Inf left out and counted', () => {
  const byTime = new Map<number, MeterSample[]>();
  const nonFinite = addMatrix(
    byTime,
    [
      {
        metric: { __name__: 'hikaricp_connections_active', job: 'orders', pool: 'a' },
        values: [
          [1000.5, '3'],
          [1001.5, 'NaN'],
          [1002.5, '4'],
        ],
      },
      {
        metric: { __name__: 'hikaricp_connections_max', job: 'orders', pool: 'a' },
        values: [[1000.5, '+Inf']],
      },
    ],
    null,
  );
  assert.equal(nonFinite, 2);
  assert.deepEqual(
    [...byTime.entries()],
    [
      [1_000_500, [{ name: 'hikaricp_connections_active', labels: { job: 'orders', pool: 'a' }, value: 3 }]],
      [1_002_500, [{ name: 'hikaricp_connections_active', labels: { job: 'orders', pool: 'a' }, value: 4 }]],
    ],
  );
  // A declared expression's result goes under its declared name, its labels kept.
  addMatrix(
    byTime,
    [{ metric: { pool: 'a' }, values: [[1000.5, '-1.5e-3']] }],
    'plateau_declared:orders:inUse',
  );
  assert.deepEqual(byTime.get(1_000_500)?.[1], {
    name: 'plateau_declared:orders:inUse',
    labels: { pool: 'a' },
    value: -0.0015,
  });
});

async function readAll(log: MeterLog): Promise<MeterScrape[]> {
  await log.close();
  const scrapes: MeterScrape[] = [];
  for await (const s of readMeterLog(log.path)) scrapes.push(s);
  return scrapes;
}

test('an unreachable server is one failure in words, never a throw', async () => {
  const url = `http://127.0.0.1:${await freeLoopbackPort()}`;
  const log = new MeterLog(join(dir, 'unreachable.ndjson'));
  const reading = await readPrometheusServer({
    url,
    match: '{job="orders"}',
    names: ['hikaricp_connections_active'],
    expressions: [{ name: 'orders', field: 'inUse', promql: 'sum(x)' }],
    startMs: Date.now() - 10_000,
    endMs: Date.now(),
    log,
  });
  assert.equal(reading.status.source, `prometheus ${url}`);
  assert.equal(reading.status.kind, 'prometheus');
  assert.equal(reading.status.attempts, 1);
  assert.equal(reading.status.failures, 1);
  assert.equal(reading.status.firstError, `cannot reach ${url}: connection refused`);
  assert.deepEqual(reading.errors, [`cannot reach ${url}: connection refused`]);
  assert.deepEqual(await readAll(log), []);
});

test('a URL that is not a Prometheus server says so for each query', async () => {
  const cases: { status: number; body: string; type: string; words: RegExp }[] = [
    // a service's own 404 page: the path is wrong
    { status: 404, body: 'not found', type: 'text/plain', words: /^the family meters: HTTP 404 Not Found$/ },
    // a web page answered with 200 (a login page, a proxy)
    {
      status: 200,
      body: '<html>login</html>',
      type: 'text/html',
      words:
        /^the family meters: not a Prometheus API answer \(Content-Type text\/html\): is http:.* a Prometheus server\?$/,
    },
  ];
  for (const c of cases) {
    const server = await startTestServer({
      handle: (_, res) => {
        res.writeHead(c.status, { 'content-type': c.type });
        res.end(c.body);
      },
    });
    const reading = await readPrometheusServer({
      url: server.url,
      match: '',
      names: ['hikaricp_connections_active'],
      expressions: [],
      startMs: Date.now() - 5000,
      endMs: Date.now(),
      log: new MeterLog(join(dir, `not-prometheus-${c.status}.ndjson`)),
    });
    // The config page was not Prometheus's either: the step falls back to 1 s.
    assert.equal(reading.stepSeconds, 1);
    assert.equal(reading.stepFrom, 'default');
    assert.equal(reading.status.failures, 1);
    assert.match(reading.status.lastError ?? '', c.words);
    assert.deepEqual(
      server.requests.map((r) => r.url.split('?')[0]),
      ['/api/v1/status/config', '/api/v1/query_range'],
    );
  }
});
