import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  describeCommand,
  parseServiceBlock,
  planServiceProcess,
  SERVICE_DEFAULTS,
  serviceBlockFromRecord,
  serviceProcessRecord,
  splitCommand,
} from './service-process.ts';

const READY = { log: 'ready on \\d+' };

test('a service block with defaults: command split like argv, cwd from the config, SIGTERM then 10 s', () => {
  const { config, problems } = parseServiceBlock(
    {
      command: 'java -cp build OrdersService',
      env: { POOL_MAX: 4, PORT: '8080', DEBUG: false },
      ready: READY,
    },
    '/srv/orders',
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(config, {
    command: ['java', '-cp', 'build', 'OrdersService'],
    cwd: '/srv/orders',
    env: { POOL_MAX: '4', PORT: '8080', DEBUG: 'false' },
    ready: { log: 'ready on \\d+', timeoutSeconds: SERVICE_DEFAULTS.readyTimeoutSeconds },
    stop: { signal: 'SIGTERM', graceSeconds: 10 },
  });
  const other = parseServiceBlock(
    {
      command: ['node', 'server.js'],
      cwd: 'svc',
      ready: { url: 'http://127.0.0.1:8080/healthz', timeoutSeconds: 5 },
      stop: { signal: 'int', graceSeconds: 2 },
    },
    '/srv',
  );
  assert.deepEqual(other.problems, []);
  assert.equal(other.config?.cwd, '/srv/svc', 'cwd is relative to the config file');
  assert.deepEqual(other.config?.ready, { url: 'http://127.0.0.1:8080/healthz', timeoutSeconds: 5 });
  assert.deepEqual(other.config?.stop, { signal: 'SIGINT', graceSeconds: 2 });
  assert.deepEqual(parseServiceBlock({ command: 'x', ready: READY, stop: 'SIGQUIT' }).config?.stop, {
    signal: 'SIGQUIT',
    graceSeconds: 10,
  });
});

test('every problem of a service block at once, each named with a hint', () => {
  const cases: { why: string; block: unknown; settings: string[]; message?: RegExp }[] = [
    // Not an object at all.
    { why: 'a string', block: 'node server.js', settings: ['service'] },
    // No command: nothing to start.
    { why: 'missing command', block: { ready: READY }, settings: ['service.command'], message: /is missing/ },
    // An empty or unterminated command line.
    { why: 'empty command', block: { command: '  ', ready: READY }, settings: ['service.command'] },
    { why: 'unterminated quote', block: { command: 'node "a', ready: READY }, settings: ['service.command'] },
    { why: 'empty list', block: { command: [], ready: READY }, settings: ['service.command'] },
    { why: 'list of numbers', block: { command: [1, 2], ready: READY }, settings: ['service.command'] },
    // A shell operator would reach the program as an argument.
    {
      why: 'shell operator',
      block: { command: 'cd build && java Orders', ready: READY },
      settings: ['service.command'],
      message: /runs no shell/,
    },
    // A regex that does not compile.
    {
      why: 'bad regex',
      block: { command: 'node s.js', ready: { log: 'ready (on' } },
      settings: ['service.ready.log'],
      message: /does not compile/,
    },
    // A URL that is not http(s), or not a URL.
    {
      why: 'bad url',
      block: { command: 'node s.js', ready: { url: 'localhost:8080/healthz' } },
      settings: ['service.ready.url'],
      message: /not an http\(s\) URL/,
    },
    {
      why: 'ftp url',
      block: { command: 'node s.js', ready: { url: 'ftp://127.0.0.1/' } },
      settings: ['service.ready.url'],
    },
    // Ready: missing, neither, both, a bad timeout.
    { why: 'no ready', block: { command: 'node s.js' }, settings: ['service.ready'], message: /is missing/ },
    { why: 'ready empty', block: { command: 'node s.js', ready: {} }, settings: ['service.ready'] },
    {
      why: 'log and url',
      block: { command: 'node s.js', ready: { log: 'x', url: 'http://127.0.0.1/' } },
      settings: ['service.ready'],
      message: /both/,
    },
    {
      why: 'timeout 0',
      block: { command: 'node s.js', ready: { log: 'x', timeoutSeconds: 0 } },
      settings: ['service.ready.timeoutSeconds'],
    },
    // Unknown keys, at each level.
    {
      why: 'unknown keys',
      block: {
        command: 'node s.js',
        ready: { log: 'x', regex: 'y' },
        port: 8080,
        stop: { signal: 'TERM', after: 3 },
      },
      settings: ['service.port', 'service.ready.regex', 'service.stop.after'],
      message: /is not a key of service/,
    },
    // Env: names and values.
    {
      why: 'bad env',
      block: { command: 'node s.js', ready: READY, env: { '1X': 'a', OK: { nested: 1 } } },
      settings: ['service.env.1X', 'service.env.OK'],
    },
    {
      why: 'env a list',
      block: { command: 'node s.js', ready: READY, env: ['A=1'] },
      settings: ['service.env'],
    },
    // Stop: a signal that does not exist, a negative grace.
    {
      why: 'bad signal',
      block: { command: 'node s.js', ready: READY, stop: 'SIGNOPE' },
      settings: ['service.stop'],
    },
    {
      why: 'negative grace',
      block: { command: 'node s.js', ready: READY, stop: { graceSeconds: -1 } },
      settings: ['service.stop.graceSeconds'],
    },
    { why: 'cwd a number', block: { command: 'node s.js', ready: READY, cwd: 3 }, settings: ['service.cwd'] },
    // All at once: missing command, bad regex, unknown key.
    {
      why: 'several',
      block: { ready: { log: '[' }, restart: true },
      settings: ['service.command', 'service.ready.log', 'service.restart'],
    },
  ];
  for (const c of cases) {
    const { config, problems } = parseServiceBlock(c.block, '/srv');
    assert.equal(config, undefined, c.why);
    assert.deepEqual(problems.map((p) => p.setting).sort(), [...c.settings].sort(), c.why);
    for (const p of problems) assert.ok(p.hint.length > 0, `${c.why}: ${p.setting} has a hint`);
    if (c.message) assert.match(problems[0]!.message, c.message, c.why);
  }
});

test('command lines split as a shell would, without one', () => {
  const cases: [string, string[] | undefined][] = [
    ['java -cp build OrdersService', ['java', '-cp', 'build', 'OrdersService']],
    // Quotes keep blanks; an empty quoted argument stays an argument.
    [`node "my server.js" '' --name='a b'`, ['node', 'my server.js', '', '--name=a b']],
    // Escapes outside and inside double quotes; single quotes keep backslashes.
    [String.raw`a\ b "c\"d" 'e\f'`, ['a b', 'c"d', String.raw`e\f`]],
    // $VAR and globs are literal: no shell expands them.
    ['echo $HOME *.js', ['echo', '$HOME', '*.js']],
    ['node "open', undefined],
    ['node \\', undefined],
  ];
  for (const [text, argv] of cases) assert.deepEqual(splitCommand(text), argv, text);
  assert.equal(describeCommand(['node', 'my server.js', "it's"]), `node 'my server.js' 'it'\\''s'`);
});

test('--set lays over the env with source flag, and a key the env lacks is added and listed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-service-plan-'));
  const { plan, problems } = planServiceProcess(
    { command: 'node s.js', env: { POOL_MAX: '4', PORT: '8080' }, ready: READY },
    ['POOL_MAX=8', 'TRACE=on'],
    false,
    dir,
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(plan?.env, {
    POOL_MAX: { value: '8', source: 'flag' },
    PORT: { value: '8080', source: 'config' },
    TRACE: { value: 'on', source: 'flag' },
  });
  assert.deepEqual(plan?.added, ['TRACE']);
  // The record round-trips into a block that plans the same service (what confirm reruns).
  const again = planServiceProcess(serviceBlockFromRecord(serviceProcessRecord(plan!)), [], false);
  assert.deepEqual(Object.fromEntries(Object.entries(again.plan!.env).map(([k, v]) => [k, v.value])), {
    POOL_MAX: '8',
    PORT: '8080',
    TRACE: 'on',
  });
  assert.equal(again.plan?.cwd, dir);

  const bad = planServiceProcess(
    { command: 'node s.js', cwd: 'nope', ready: READY },
    ['POOL_MAX', '1A=2'],
    false,
    dir,
  );
  assert.deepEqual(bad.problems.map((p) => p.setting).sort(), ['--set', '--set', 'service.cwd']);
});
