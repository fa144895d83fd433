// Where scripts meet k6's semantics, the same script on real k6 and on the embedded engine
// must do the same: a check callback that throws, and k6/html (res.html(), parseHTML).
// Needs a real k6 (K6_BIN, shared/k6/k6 beside the checkout, or PATH); without one every
// test here is skipped with one line saying why. Scripts stay within ES2017 (k6 v0.49's Babel).
// test-run: load
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { checkResults } from './helpers/engine.ts';
import { type EngineName, type EngineOutcome, findRealK6, runEngine } from './helpers/real-k6.ts';
import { startTestServer } from './helpers/test-server.ts';

const found = findRealK6();
const k6 = typeof found === 'string' ? undefined : found;
const skip = typeof found === 'string' ? `real-k6 suite not run: ${found}` : false;
if (skip) process.stdout.write(`# ${skip}\n`);

const dir = await mkdtemp(join(tmpdir(), 'plateau-real-k6-semantics-'));
after(() => rm(dir, { recursive: true, force: true }));

const SHOP = readFileSync(new URL('./fixtures/html/shop.html', import.meta.url), 'utf8');

/** Writes `source` and runs it on the embedded engine, then on k6 (never both at once). */
async function both(source: string, name: string): Promise<Record<EngineName, EngineOutcome>> {
  const runDir = await mkdtemp(join(dir, `${name}-`));
  const script = join(runDir, `${name}.js`);
  await writeFile(script, source);
  const embedded = await runEngine('embedded', k6!, script, [], runDir, { timeoutMs: 30_000 });
  const real = await runEngine('k6', k6!, script, [], runDir, { timeoutMs: 30_000 });
  return { embedded, k6: real };
}

const failure = (o: EngineOutcome) => `${o.engine} exit ${o.code}\n${o.stderr.slice(-1500)}`;

/** The iteration errors an engine logged (k6's `source=stacktrace` lines). */
const iterationErrors = (o: EngineOutcome) =>
  o.stderr.split('\n').filter((line) => line.includes('source=stacktrace'));

test('a check callback that throws is a failed check on both, and the exception ends the iteration', {
  skip,
}, async () => {
  const server = await startTestServer({
    handle: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    },
  });
  const runs = await both(
    `
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
const reached = new Counter('reached_after_check');
export const options = { iterations: 3 };
export default function () {
  const res = http.get('${server.url}/json');
  check(res, {
    'status 200': function (r) { return r.status === 200; },
    'cookie name': function (r) { return r.json().cookies.name === 'x'; },
    'after the thrower': function () { return true; },
  }, { kind: 'thrower' });
  reached.add(1);
}`,
    'check-throws',
  );
  for (const o of [runs.embedded, runs.k6]) {
    assert.equal(o.code, 0, failure(o));
    assert.deepEqual(
      checkResults(o.rows),
      { 'status 200': [3, 0], 'cookie name': [0, 3] },
      `${o.engine}: the thrower is failed, the check after it never runs`,
    );
    const thrown = o.rows.filter((r) => r.metric_name === 'checks' && r.check === 'cookie name');
    assert.ok(
      thrown.every((r) => /(^|&)kind=thrower(&|$)/.test(r.extra_tags ?? '')),
      `${o.engine}: the failed sample has the check's tags`,
    );
    assert.equal(o.rows.filter((r) => r.metric_name === 'reached_after_check').length, 0, o.engine);
    const errors = iterationErrors(o);
    assert.equal(errors.length, 3, `${o.engine}: one iteration error each\n${o.stderr}`);
    assert.ok(
      errors.every((line) => /TypeError/.test(line) && /name/.test(line)),
      `${o.engine}: ${errors[0]}`,
    );
    const root = (o.exported as unknown as { root_group: { checks: Record<string, { fails: number }> } })
      .root_group;
    assert.equal(root.checks['cookie name']?.fails, 3, `${o.engine}: the group tree counts it failed`);
  }
  assert.equal(
    runs.embedded.exported?.metrics.checks?.fails,
    runs.k6.exported?.metrics.checks?.fails,
    'the checks rate: the same fails',
  );
  assert.equal(runs.embedded.exported?.metrics.checks?.passes, runs.k6.exported?.metrics.checks?.passes);
});

test('res.html() and parseHTML read the same text, attributes, counts and elements on both', {
  skip,
}, async () => {
  const server = await startTestServer({
    handle: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(SHOP);
    },
  });
  // Each fact is a sample of html_fact tagged with its name and its value, URI-encoded so that
  // the CSV's k=v&k=v extra tags keep it whole.
  const runs = await both(
    `
import http from 'k6/http';
import { parseHTML } from 'k6/html';
import { Counter } from 'k6/metrics';
const facts = new Counter('html_fact');
function fact(name, value) {
  facts.add(1, { fact: name, value: encodeURIComponent(JSON.stringify(value === undefined ? '(undefined)' : value)) });
}
export const options = { iterations: 1 };
export default function () {
  const res = http.get('${server.url}/shop');
  const doc = res.html();
  fact('title', res.html('title').text());
  fact('items', doc.find('li.item').size());
  fact('sale href', doc.find('li.sale a').attr('href'));
  fact('first href', doc.find('li a').attr('href'));
  fact('missing attr', doc.find('h1').attr('title'));
  fact('missing attr fallback', doc.find('h1').attr('title', 'none'));
  fact('empty text', doc.find('table').text());
  fact('first', doc.find('li').first().text());
  fact('last', doc.find('li').last().text());
  fact('eq 1', doc.find('li').eq(1).find('a').text());
  fact('eq past end', doc.find('li').eq(9).size());
  fact('children', doc.find('#products').children().size());
  fact('parent', doc.find('b').parent().attr('data-id'));
  fact('filter', doc.find('li').filter('.sale').size());
  fact('is', doc.find('li').is('.sale'));
  fact('not', doc.find('li').not('.sale').size());
  fact('sale html', doc.find('li.sale').html());
  const seen = [];
  const each = doc.find('li').each(function (i, el) { seen.push(i + ':' + el.textContent().trim() + ':' + el.nodeName()); });
  fact('each', seen.join('|'));
  fact('each returns', each.size());
  fact('map', doc.find('li a').map(function (i, s) { return s.attr('href'); }).join(','));
  const second = doc.find('a').get(1);
  fact('get(1)', second.getAttribute('href') + ' ' + second.textContent() + ' ' + second.nodeType());
  fact('get past end', typeof doc.find('a').get(3));
  fact('get()', doc.find('a').get().length);
  const h1 = doc.find('h1').get(0);
  fact('h1', [h1.id(), h1.classList().join(' '), h1.innerHTML(), h1.nextElementSibling().id(), h1.hasAttribute('id')].join(' '));
  const list = doc.find('#products').get(0);
  fact('list', [list.childElementCount(), list.querySelectorAll('a').length, list.firstChild().nodeName(), list.getElementsByClassName('sale').length].join(' '));
  fact('qty', doc.find('input[name=qty]').val());
  fact('gift', doc.find('input[name=gift]').val());
  fact('note', doc.find('textarea').val());
  fact('color', doc.find('select[name=color]').val());
  fact('sizes', doc.find('select[name=sizes]').val());
  fact('data', doc.find('li').first().data());
  fact('data id', doc.find('li').first().data('id'));
  fact('parseHTML', parseHTML('<p class="x">hi <i>there</i></p>').find('p').text());
  fact('parseHTML attr', parseHTML('<p class="x">hi</p>').find('p').attr('class'));
}`,
    'html',
  );
  const factsOf = (o: EngineOutcome) =>
    Object.fromEntries(
      o.rows
        .filter((r) => r.metric_name === 'html_fact')
        .map((r) => {
          const tags = new Map(
            (r.extra_tags ?? '').split('&').map((pair) => pair.split('=') as [string, string]),
          );
          return [tags.get('fact'), JSON.parse(decodeURIComponent(tags.get('value') ?? '""'))];
        }),
    );
  for (const o of [runs.embedded, runs.k6]) {
    assert.equal(o.code, 0, failure(o));
    assert.deepEqual(iterationErrors(o), [], `${o.engine}: the iteration ran to its end`);
  }
  const embedded = factsOf(runs.embedded);
  const real = factsOf(runs.k6);
  assert.equal(Object.keys(real).length, 34, `every fact recorded on k6: ${JSON.stringify(real)}`);
  assert.deepEqual(embedded, real);
  // And the facts are the page's, not the same nonsense on both.
  assert.equal(real.title, 'Shop & more');
  assert.equal(real.items, 3);
  assert.equal(real['missing attr'], '(undefined)');
});
