// An output's file that fails or falls behind: real devices and a real named pipe whose
// reader is another process, told when to read or to go away.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { PlateauError } from '../../contract/index.ts';
import { openOutputFile } from './output-file.ts';

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-output-file-'));
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A named pipe `path` and its reader: a shell that opens it, waits for a line on its stdin,
 * then copies what the pipe holds to `copy` (or, with no `copy`, closes it unread).
 */
function pipeReader(path: string, copy?: string): { reader: ChildProcess; go: () => void } {
  execFileSync('mkfifo', [path]);
  const script = copy ? 'exec 3<"$1"; read go; cat <&3 > "$2"' : 'exec 3<"$1"; read go';
  const reader = spawn('sh', ['-c', script, 'sh', path, copy ?? ''], {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  return { reader, go: () => reader.stdin!.end('go\n') };
}

/** A promise of the first failure an output file reports, and the listener to open it with. */
function failureListener(): { failed: Promise<PlateauError>; onFailure: (f: PlateauError) => void } {
  let onFailure!: (f: PlateauError) => void;
  const failed = new Promise<PlateauError>((resolve) => {
    onFailure = resolve;
  });
  return { failed, onFailure };
}

for (const gzip of [false, true]) {
  test(`a full disk (/dev/full${gzip ? ', through gzip' : ''}) is reported once, named, and does not throw`, async () => {
    await withDir(async (dir) => {
      // The name decides gzip: a link with a .gz name to the device that is always full.
      const path = join(dir, gzip ? 'out.csv.gz' : 'out.csv');
      await symlink('/dev/full', path);
      const failures: PlateauError[] = [];
      const { failed, onFailure } = failureListener();
      const file = await openOutputFile(path, 'CSV', {
        onFailure: (f) => {
          failures.push(f);
          onFailure(f);
        },
      });
      file.write('metric_name,timestamp\n');
      file.sync();
      const failure = await failed;
      assert.match(
        failure.message,
        /the CSV output \S+out\.csv(\.gz)? cannot be written: no space left on the disk \(ENOSPC\)/,
      );
      assert.match(failure.hint ?? '', /free space on its disk/);
      file.write('more rows\n'); // ignored, not thrown
      await file.close();
      assert.equal(failures.length, 1);
      assert.equal(file.failure, failure);
    });
  });

  test(`a file slower than the samples${gzip ? ' (gzip)' : ''} fails past its queue's cap, and what waits is still written`, async () => {
    await withDir(async (dir) => {
      const path = join(dir, gzip ? 'out.csv.gz' : 'out.csv');
      const copy = join(dir, 'copy');
      const { reader, go } = pipeReader(path, copy);
      const exited = once(reader, 'exit');
      const { failed, onFailure } = failureListener();
      const maxQueuedBytes = 1024 * 1024;
      const file = await openOutputFile(path, 'CSV', { onFailure, maxQueuedBytes });
      // Random bytes do not compress: the queue before and after gzip fills as the pipe does.
      const written: Buffer[] = [];
      for (let i = 0; i < 200 && !file.failure; i++) {
        const chunk = randomBytes(64 * 1024);
        written.push(chunk);
        file.write(chunk);
      }
      const failure = file.failure;
      assert.ok(failure, 'failed within 200 chunks of 64 KB');
      assert.equal(await failed, failure);
      assert.match(failure.message, /the CSV output \S+ fell behind: \d+ MB of samples wait for the file/);
      assert.ok(written.length * 64 * 1024 > maxQueuedBytes, 'more than the cap was written');
      go();
      await file.close();
      await exited;
      const got = await readFile(copy);
      assert.ok(
        (gzip ? gunzipSync(got) : got).equals(Buffer.concat(written)),
        'every byte queued reached the file',
      );
    });
  });
}

test('a reader that goes away is reported as such (EPIPE), and closing does not wait for it', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'out.csv');
    const { reader, go } = pipeReader(path);
    const { failed, onFailure } = failureListener();
    const file = await openOutputFile(path, 'CSV', { onFailure });
    // More than a pipe holds, so that a write is still waiting when the reader leaves.
    file.write(randomBytes(1024 * 1024));
    go();
    await once(reader, 'exit');
    const failure = await failed;
    assert.match(failure.message, /cannot be written: its reader closed it \(EPIPE\)/);
    assert.match(failure.hint ?? '', /keep whatever reads the output running/);
    await file.close();
  });
});
