// A stream cut off mid-line ends at its last whole line; one that ended as written keeps all.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WholeLines } from './whole-lines.ts';

async function through(chunks: string[], cut: boolean): Promise<{ text: string; dropped: number }> {
  const lines = new WholeLines();
  let text = '';
  lines.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const ended = new Promise((resolve) => lines.on('end', resolve));
  for (const chunk of chunks) lines.write(Buffer.from(chunk));
  if (cut) lines.cutOff();
  else lines.end();
  await ended;
  return { text, dropped: lines.droppedBytes };
}

test('a cut source loses its part line (`…,1.5` of `…,1.53` would read as a whole row)', async () => {
  const chunks = ['http_reqs,1,1.0\nhttp_req_dur', 'ation,1,12.0\nhttp_req_duration,2,1.5'];
  assert.deepEqual(await through(chunks, true), {
    text: 'http_reqs,1,1.0\nhttp_req_duration,1,12.0\n',
    dropped: 'http_req_duration,2,1.5'.length,
  });
});

test('a source that ended as written keeps a last line without its newline', async () => {
  assert.deepEqual(await through(['a\nb', '\nc'], false), { text: 'a\nb\nc', dropped: 0 });
});

test('however the text is cut into chunks, what passes is the text, held lines joined whole', async () => {
  const text = Array.from({ length: 200 }, (_, i) => `http_reqs,${i},1.000000,,step=r${i % 7}`).join('\n');
  for (const size of [1, 7, 64, 333, 5000]) {
    const chunks: string[] = [];
    for (let at = 0; at < text.length; at += size) chunks.push(text.slice(at, at + size));
    const lines = new WholeLines();
    const pieces: Buffer[] = [];
    lines.on('data', (chunk: Buffer) => pieces.push(chunk));
    const ended = new Promise((resolve) => lines.on('end', resolve));
    for (const chunk of chunks) lines.write(Buffer.from(chunk));
    lines.end();
    await ended;
    assert.equal(Buffer.concat(pieces).toString(), text, `${size}-byte chunks`);
    // Every piece but the last ends at a line break: a reader never sees half a row.
    assert.ok(
      pieces.slice(0, -1).every((p) => p.at(-1) === 0x0a),
      `${size}-byte chunks end at lines`,
    );
  }
});
