import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Command } from 'commander';
import type { ConfigProblem } from '../../contract/index.ts';
import {
  addEngineFlags,
  ENGINE_FLAGS,
  FLAG_REFERENCE_HEADER,
  flagReferenceRows,
  readEngineFlags,
} from './engine-flags.ts';

function read(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const command = addEngineFlags(new Command().exitOverride().argument('<script>'));
  command.parse(['node', 'plateau', 'script.js', ...argv]);
  const problems: ConfigProblem[] = [];
  const flags = readEngineFlags(command, command.opts(), env, problems);
  return { flags, problems };
}

test("docs/engine.md's flag reference is the flag table", () => {
  const docs = readFileSync(new URL('../../docs/engine.md', import.meta.url), 'utf8');
  const section = docs.slice(docs.indexOf('<!-- BEGIN engine flags'), docs.indexOf('<!-- END engine flags'));
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  assert.deepEqual(rows, [FLAG_REFERENCE_HEADER, ...flagReferenceRows()], 'run `npm run docs:flags`');
});

test('every flag has one long name and at most one variable, none used twice', () => {
  const longs = ENGINE_FLAGS.map((f) => /--[a-z-]+/.exec(f.flags)?.[0]);
  assert.equal(new Set(longs).size, longs.length);
  const envs = ENGINE_FLAGS.flatMap((f) => (f.env ? [f.env] : []));
  assert.equal(new Set(envs).size, envs.length);
  for (const env of envs) assert.match(env, /^K6_[A-Z_]+$/);
});

test('a flag outranks its variable; a variable stands in when the flag is not given', () => {
  const both = read(['--max-redirects', '3'], { K6_MAX_REDIRECTS: '7', K6_USER_AGENT: 'from-env' });
  assert.deepEqual(both.problems, []);
  assert.equal(both.flags.scriptOptions.maxRedirects, 3);
  assert.equal(both.flags.scriptOptions.userAgent, 'from-env');
  assert.equal(both.flags.source('--max-redirects'), 'cli');
  assert.equal(both.flags.source('--user-agent'), 'env');
  assert.equal(both.flags.source('--rps'), undefined);
});

test('switches set their script option from the flag or from true/1 in the variable', () => {
  const { flags, problems } = read(['--no-setup'], {
    K6_NO_TEARDOWN: '1',
    K6_THROW: 'false',
    K6_NO_CONNECTION_REUSE: 'true',
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(flags.scriptOptions, { noSetup: true, noTeardown: true, noConnectionReuse: true });
  assert.equal(flags.on('--throw'), false);
});

test('lists split on commas; K6_STAGES is several stages, K6_OUT one output', () => {
  const { flags } = read(['--system-tags', 'status, method,,url'], {
    K6_STAGES: '10s:5,20s:0',
    K6_OUT: 'csv=a,b.csv',
    K6_BLOCK_HOSTNAMES: '*.internal',
  });
  assert.deepEqual(flags.scriptOptions.systemTags, ['status', 'method', 'url']);
  assert.deepEqual(flags.scriptOptions.blockHostnames, ['*.internal']);
  assert.deepEqual(flags.get('--stage'), ['10s:5', '20s:0']);
  assert.deepEqual(flags.get('--out'), ['csv=a,b.csv']);
});

test('--http-debug takes full or nothing; the system environment is passed unless false', () => {
  assert.equal(read(['--http-debug']).flags.scriptOptions.httpDebug, 'headers');
  assert.equal(read(['--http-debug=full']).flags.scriptOptions.httpDebug, 'full');
  assert.equal(read([], { K6_HTTP_DEBUG: 'full' }).flags.scriptOptions.httpDebug, 'full');
  assert.equal(read([], { K6_HTTP_DEBUG: '0' }).flags.scriptOptions.httpDebug, undefined);
  assert.equal(read([]).flags.get('--include-system-env-vars'), true);
  assert.equal(read(['--include-system-env-vars=false']).flags.get('--include-system-env-vars'), false);
  assert.equal(read([], { K6_INCLUDE_SYSTEM_ENV_VARS: '0' }).flags.get('--include-system-env-vars'), false);
});

test('bad values are problems naming where they came from and what to write', () => {
  const { problems } = read(['--rps', 'fast', '--http-debug=bodies', '--vus', '1.5'], {
    K6_MAX_REDIRECTS: '-1',
    K6_NO_SETUP: 'yes',
  });
  const by = Object.fromEntries(problems.map((p) => [p.setting, p]));
  assert.match(by['--rps']?.hint ?? '', /whole number of requests per second/);
  assert.match(by['--http-debug']?.hint ?? '', /--http-debug=full/);
  assert.match(by['--vus']?.message ?? '', /"1.5" is not accepted/);
  assert.match(by.K6_MAX_REDIRECTS?.hint ?? '', /0 for none/);
  assert.equal(by.K6_NO_SETUP?.hint, 'use true or false');
  assert.equal(problems.length, 5);
});
