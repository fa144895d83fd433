import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadBlockingCallRewrite } from './blocking-calls.ts';

const rewriteBlockingCalls = await loadBlockingCallRewrite();

// The shape of esbuild's CommonJS bundle, as the loader makes it.
const PRELUDE = `var m = globalThis.__plateau.modules["k6/http"];
var http_default = m.default;
var get = m.get;
var asyncRequest = m.asyncRequest;
var m2 = globalThis.__plateau.modules["k6"];
var sleep = m2.sleep;
var group = m2.group;
`;
const at = (line: number, column: number) => `script.js:${line}:${column}`;

function rewrite(body: string): string {
  const result = rewriteBlockingCalls(PRELUDE + body, at);
  if ('problems' in result) assert.fail(JSON.stringify(result.problems));
  return result.code.slice(PRELUDE.length);
}

test('a function that makes a blocking call becomes async, and so do the functions that call it', () => {
  assert.equal(
    rewrite(
      'function login() { return http_default.post("/l").status; }\nfunction run() { login(); sleep(1); }',
    ),
    'async function login() { return (await http_default.post("/l")).status; }\nasync function run() { (await login()); (await sleep(1)); }',
  );
});

test('arrows, object methods and group bodies are made to wait; an awaited call is left alone', () => {
  assert.equal(
    rewrite(
      'const api = { me() { return get("/me"); } };\nconst run = () => group("g", () => api.me());\nasync function x() { await sleep(1); }',
    ),
    'const api = { async me() { return (await get("/me")); } };\nconst run = async () => (await group("g", globalThis.__plateau.blocking(async () => (await api.me()))));\nasync function x() { await sleep(1); }',
  );
});

test('a script of async forms only is not touched', () => {
  const code = `${PRELUDE}async function run() { await asyncRequest("GET", "/"); }`;
  assert.deepEqual(rewriteBlockingCalls(code, at), { code, rewritten: false });
});

test('problems name their place in the source', () => {
  const result = rewriteBlockingCalls(`${PRELUDE}function run() { [1].forEach(() => get("/")); }`, at);
  assert.ok('problems' in result);
  assert.equal(result.problems.length, 1);
  assert.match(result.problems[0]!.where, /^script\.js:8:/);
  assert.match(result.problems[0]!.message, /callback passed to \[1\]\.forEach\(\)/);
});
