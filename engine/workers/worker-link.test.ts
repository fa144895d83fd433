// A worker's link to its coordinator: no message lost between `init` and the link listening.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { receiveInit } from './worker-link.ts';
import type { ToWorker, WorkerInit } from './worker-protocol.ts';

test('messages that come with init, before anyone listens, are handed over in order', async () => {
  const channel = Object.assign(new EventEmitter(), { send: () => true });
  const received = receiveInit(channel);
  // As Node's IPC does with messages read together: each emitted in turn, before the
  // promise's continuation can attach the link's listener.
  channel.emit('message', { kind: 'start', atMs: 1 });
  channel.emit('message', { kind: 'init', index: 1 } as unknown as WorkerInit);
  channel.emit('message', { kind: 'stop', cause: { kind: 'output', message: 'disk full' } });
  channel.emit('message', { kind: 'start', atMs: 2 });
  const { init, listen } = await received;
  assert.equal(init.index, 1);
  const got: ToWorker[] = [];
  listen((message) => got.push(message));
  channel.emit('message', { kind: 'start', atMs: 3 });
  assert.deepEqual(
    got.map((m) => m.kind + (m.kind === 'start' ? m.atMs : '')),
    ['stop', 'start2', 'start3'],
    "what came before init is not the worker's; everything after it is, once, in order",
  );
});

test('a process without an IPC channel is told how workers start', async () => {
  await assert.rejects(receiveInit(new EventEmitter()), /started by `plateau engine run --workers`/);
});
