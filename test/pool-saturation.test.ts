// Overload behaviour and pool utilisation, against a real embedded PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServerLiveReport, ServerStepReport, StepBucket } from '../contract/index.ts';
import { fetchText, type TestResponse } from './helpers/http.ts';
import { useStatementServices } from './helpers/service.ts';
import { waitUntil } from './helpers/wait-until.ts';

const startService = useStatementServices();

function concurrent(url: string, count: number, step: string): Promise<TestResponse[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      fetchText(`${url}/statement?account=${i}`, { 'x-load-step': step }),
    ),
  );
}

/** The service's `GET /steps/live` body: its pool and admission state now. */
async function live(url: string): Promise<ServerLiveReport> {
  return JSON.parse((await fetchText(`${url}/steps/live`)).text) as ServerLiveReport;
}

async function stepOf(url: string, step: string): Promise<StepBucket> {
  const report = JSON.parse((await fetchText(`${url}/steps`)).text) as ServerStepReport;
  const bucket = report.steps.find((s) => s.step === step);
  assert.ok(bucket, `bucket ${step} exists`);
  return bucket;
}

test('POOL_MAX=2, QUEUE_MAX=2, 10 at once: the overflow is shed with 503 queue + Retry-After', async () => {
  // A wait that outlives ACQUIRE_TIMEOUT_MS is shed too, as `timeout` (the next test): at
  // the default 200 ms a queued request on the saturated machine of a full run (its
  // connection still being opened, a 100 ms query running late) was shed that way. This test
  // is about the queue's cap, so the waits it queues are given all the time they need.
  const service = await startService({
    poolMax: 2,
    queueMax: 2,
    acquireTimeoutMs: 5_000,
    queryMs: 100,
    payloadKb: 1,
  });
  const started = Date.now();
  const responses = await concurrent(service.url, 10, 'burst');
  assert.ok(Date.now() - started < 10_000, 'nothing hangs');
  const ok = responses.filter((r) => r.status === 200);
  const shed = responses.filter((r) => r.status === 503);
  assert.equal(ok.length + shed.length, 10, 'only 200 and 503');
  assert.ok(ok.length >= 2, `at least the pool's worth served, got ${ok.length}`);
  assert.ok(shed.length >= 1, 'some refused');
  for (const r of shed) {
    assert.deepEqual(JSON.parse(r.text), { error: 'overloaded', reason: 'queue' });
    assert.equal(r.headers['retry-after'], '1');
  }
  const bucket = await stepOf(service.url, 'burst');
  assert.equal(bucket.sheds.queue, shed.length);
  // Each queue refusal found everything full: the pool at its max and the queue at its cap.
  assert.equal(bucket.saturated, shed.length);
  const live = JSON.parse((await fetchText(`${service.url}/steps/live`)).text);
  assert.equal(live.saturated, shed.length);
  const metrics = (await fetchText(`${service.url}/metrics`)).text;
  assert.match(metrics, new RegExp(`db_pool_saturated_total ${shed.length}\\b`));
  assert.match(metrics, /db_pool_connections_max 2\b/);
  assert.match(metrics, /db_pool_waiting_max 2\b/);
  assert.ok(
    service.logs.some((l) => /event=pool_saturated .*inUse=2 max=2 waiting=2/.test(l)),
    'one rate-limited saturation log line',
  );
  assert.equal(service.logs.filter((l) => l.includes('event=pool_saturated')).length, 1);
  assert.equal(bucket.statuses['503'], shed.length);
  assert.ok(bucket.pool.waitingMax <= 2, 'the queue never grew past QUEUE_MAX');
  assert.ok(
    service.logs.some((l) => /event=pool_saturated total=\d+ inUse=2 max=2 waiting=2/.test(l)),
    'a saturation log line',
  );
});

test('a wait longer than ACQUIRE_TIMEOUT_MS is shed with reason timeout', async () => {
  const service = await startService({
    poolMax: 1,
    queueMax: 10,
    acquireTimeoutMs: 50,
    queryMs: 400,
    payloadKb: 1,
  });
  const responses = await concurrent(service.url, 3, 'slow');
  const statuses = responses.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 503, 503]);
  for (const r of responses.filter((x) => x.status === 503)) {
    assert.deepEqual(JSON.parse(r.text), { error: 'overloaded', reason: 'timeout' });
    assert.equal(r.headers['retry-after'], '1');
  }
  const bucket = await stepOf(service.url, 'slow');
  assert.equal(bucket.sheds.timeout, 2);
  assert.ok(bucket.waitMs.max >= 45, `timed-out waits are recorded, max ${bucket.waitMs.max} ms`);
});

test('SHED=off never refuses: overload becomes waiting', async () => {
  const service = await startService({ poolMax: 1, shed: false, queryMs: 20, payloadKb: 1 });
  const responses = await concurrent(service.url, 12, 'queued');
  assert.deepEqual(
    responses.map((r) => r.status),
    Array(12).fill(200),
  );
  const bucket = await stepOf(service.url, 'queued');
  assert.ok(bucket.pool.waitingMax >= 5, `requests waited in line, max ${bucket.pool.waitingMax}`);
  assert.ok(bucket.waitMs.max >= 100, `the last waited for most of the others, ${bucket.waitMs.max} ms`);
  assert.equal(bucket.sheds.queue + bucket.sheds.timeout, 0);
});

test('DEADLINES=on: a request whose deadline passed in the wait, or will before its query ends, is answered 504 without its query', async () => {
  // One connection and 800 ms queries. A (deadline 5 s) takes the connection; once it has,
  // B (100 ms) and C (900 ms) are sent and wait for it until A's query ends, ~800 ms later:
  // B's deadline has passed by then (wait), and C's ~100 ms left are shorter than the 800 ms
  // query (budget). Either holds if B and C arrive within 700 ms of A taking the connection.
  const service = await startService({
    poolMax: 1,
    shed: false,
    queryMs: 800,
    payloadKb: 1,
    deadlines: true,
  });
  const send = (account: number, deadlineMs: number) =>
    fetchText(`${service.url}/statement?account=${account}`, {
      'x-load-step': 'late',
      'x-request-timeout-ms': String(deadlineMs),
    });
  const a = send(1, 5000);
  await waitUntil(async () => (await live(service.url)).checkedOut === 1, 'A taking the connection');
  const [b, c] = await Promise.all([send(2, 100), send(3, 900)]);
  assert.equal((await a).status, 200);
  assert.deepEqual([b.status, c.status], [504, 504]);
  assert.equal(JSON.parse(b.text).reason, 'wait');
  assert.equal(JSON.parse(c.text).reason, 'budget');
  assert.equal(b.headers['retry-after'], undefined, 'a 504 is not a refusal: no Retry-After');
  const bucket = await stepOf(service.url, 'late');
  assert.deepEqual(bucket.expired, { wait: 1, budget: 1 });
  assert.equal(bucket.queryMs.count, 1, 'no query ran for the expired requests');
  assert.equal(bucket.databaseMs?.count, 1, 'the database ran one query');
  assert.equal(bucket.sheds.queue + bucket.sheds.timeout, 0, 'an expiry is not a refusal');
  const metrics = (await fetchText(`${service.url}/metrics`)).text;
  assert.match(metrics, /http_requests_expired_total\{reason="wait"\} 1/);
  assert.match(metrics, /http_requests_expired_total\{reason="budget"\} 1/);
  // Without the setting (the default), the header changes nothing.
  const plain = await startService({ poolMax: 1, shed: false, queryMs: 150, payloadKb: 1 });
  const all = await Promise.all(
    Array.from({ length: 3 }, (_, i) =>
      fetchText(`${plain.url}/statement?account=${i}`, { 'x-request-timeout-ms': '100' }),
    ),
  );
  assert.deepEqual(
    all.map((r) => r.status),
    [200, 200, 200],
  );
});

test('ADMISSION=on: while the event loop is late, new requests are refused at the door; admitted ones finish', async () => {
  // 80 ms of event-loop CPU per request after a 100 ms query: the eight of the first burst
  // all arrive while the loop is idle (the first CPU work starts at ~100 ms), then keep it
  // busy for ~640 ms, so the gate (read every 50 ms) sees a delay far above its 30 ms mark.
  const service = await startService({
    poolMax: 4,
    queryMs: 100,
    payloadKb: 1,
    shed: false,
    cpuMs: 80,
    admission: true,
    admissionHighMs: 30,
    admissionLowMs: 5,
    admissionSampleMs: 50,
  });
  const first = concurrent(service.url, 8, 'gate');
  await waitUntil(async () => (await live(service.url)).admission === 'busy', 'the gate turning busy');
  const refused = await concurrent(service.url, 4, 'gate');
  const admitted = await first;
  // The burst normally finds the gate open, but a stall of the machine while its requests
  // arrive is event-loop lateness too, and the gate rightly refuses the rest of them (the
  // last of eight in CI run 91). What must hold: each is served or refused at the door, never
  // shed once admitted, and the counts agree.
  const burstRefused = admitted.filter((r) => r.status === 503);
  assert.ok(
    admitted.every((r) => r.status === 200 || r.status === 503),
    `served or refused: ${admitted.map((r) => r.status)}`,
  );
  assert.ok(burstRefused.length < 8, 'the first of the burst found the gate open');
  assert.deepEqual(
    refused.map((r) => r.status),
    [503, 503, 503, 503],
  );
  for (const r of [...burstRefused, ...refused]) {
    assert.deepEqual(JSON.parse(r.text), { error: 'overloaded', reason: 'admission' });
    assert.equal(r.headers['retry-after'], '1');
  }
  // Once the loop is idle again the gate goes back to normal and admits.
  await waitUntil(async () => (await live(service.url)).admission === 'normal', 'the gate reopening');
  const after = await fetchText(`${service.url}/statement?account=1`, { 'x-load-step': 'gate' });
  assert.equal(after.status, 200);
  const bucket = await stepOf(service.url, 'gate');
  const shed = burstRefused.length + 4;
  assert.equal(bucket.sheds.admission, shed);
  assert.equal(bucket.queryMs.count, 8 - burstRefused.length + 1, 'no query ran for a refused request');
  const metrics = (await fetchText(`${service.url}/metrics`)).text;
  assert.match(metrics, /admission_transitions_total\{to="busy"\} [1-9]/);
  assert.match(metrics, /admission_transitions_total\{to="normal"\} [1-9]/);
  assert.match(metrics, new RegExp(`http_requests_shed_total\\{reason="admission"\\} ${shed}\\b`));
  assert.ok(service.logs.some((l) => /event=admission_busy loopDelayMs=\S+ high=30/.test(l)));
  assert.ok(service.logs.some((l) => /event=admission_normal loopDelayMs=\S+ low=5/.test(l)));
  // The last request's own 80 ms may have closed the door again; once idle it reopens.
  await waitUntil(
    async () => (await live(service.url)).admission === 'normal',
    'the gate reopening after the last request',
  );
  assert.match((await fetchText(`${service.url}/metrics`)).text, /admission_busy 0/);
});

test('more requests in flight than POOL_MAX read as ~100% checked out', async () => {
  // Twice the pool's worth in flight, so a waiter takes each connection as it is released.
  // With exactly POOL_MAX closed-loop callers the pool idles for each caller's round trip
  // between an answer and its next request: on the saturated machine of a full run that was
  // 12% of the time (CI run 74), a true reading of a pool that was not full.
  const poolMax = 4;
  const queryMs = 400;
  const service = await startService({
    poolMax,
    queueMax: 2 * poolMax,
    acquireTimeoutMs: 5_000,
    queryMs,
    payloadKb: 1,
  });
  // Opens every connection first, so the step's window does not include their connects.
  await concurrent(service.url, poolMax, 'warm');
  const until = Date.now() + 2000;
  const worker = async (w: number) => {
    while (Date.now() < until)
      await fetchText(`${service.url}/statement?account=${w}`, { 'x-load-step': 'full' });
  };
  // The step's window ends when the next step's first request arrives. Sent as the callers
  // stop, it arrives while the pool is still full: the POOL_MAX callers waiting then hold
  // their connections for a whole query after the running ones finish. Read later, the
  // window would also hold the drain of the last queries and the gap before the read.
  const next = new Promise<TestResponse>((resolve, reject) => {
    setTimeout(
      () => fetchText(`${service.url}/statement?account=0`, { 'x-load-step': 'next' }).then(resolve, reject),
      until - Date.now(),
    );
  });
  await Promise.all([...Array.from({ length: 2 * poolMax }, (_, w) => worker(w)), next]);
  const bucket = await stepOf(service.url, 'full');
  assert.equal(bucket.sheds.queue + bucket.sheds.timeout, 0);
  const pct = bucket.pool.checkedOutPct ?? 0;
  assert.ok(pct >= 90 && pct <= 101, `checked out ${pct}% of the pool`);
  assert.equal(bucket.pool.checkedOutMax, poolMax);
  assert.ok(bucket.pool.waitingMax > 0, 'callers waited for the full pool');
});

test('one request at a time reads as query time × rate ÷ POOL_MAX', async () => {
  const poolMax = 4;
  const service = await startService({ poolMax, queryMs: 50, payloadKb: 1 });
  // 20 requests, one every 100 ms (≈10/s), each alone in the pool.
  for (let i = 0; i < 20; i++) {
    const sent = Date.now();
    await fetchText(`${service.url}/statement?account=${i}`, { 'x-load-step': 'single' });
    await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - sent))));
  }
  const bucket = await stepOf(service.url, 'single');
  const ratePerSec = bucket.served / (bucket.pool.currentMs / 1000);
  // The mean, as Little's law has it: a query slowed by a stall of the machine holds its
  // connection longer, which the checked-out time counts and a median would not.
  const queryS = (bucket.queryMs.mean ?? bucket.queryMs.p50) / 1000;
  const predictedPct = ((queryS * ratePerSec) / poolMax) * 100;
  const measuredPct = bucket.pool.checkedOutPct ?? 0;
  assert.ok(
    Math.abs(measuredPct - predictedPct) <= predictedPct * 0.2,
    `measured ${measuredPct}% vs predicted ${predictedPct.toFixed(2)}% (query ${queryS}s × ${ratePerSec.toFixed(2)}/s ÷ ${poolMax})`,
  );
  // About 12.5 % (50 ms × 10/s ÷ 4); the band catches a unit or scale error, not the machine's speed.
  assert.ok(measuredPct > 5 && measuredPct < 30, `about 12.5%, got ${measuredPct}`);
  assert.equal(bucket.pool.checkedOutMax, 1);
});
