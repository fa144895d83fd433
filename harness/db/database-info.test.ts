import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPlateauError } from '../../contract/index.ts';
import { openDatabase } from './database.ts';
import { redactUrl } from './database-info.ts';

test('redactUrl hides the password and keeps the rest', () => {
  assert.equal(redactUrl('postgres://app:s3cret@db:5432/x'), 'postgres://app:****@db:5432/x');
  assert.equal(redactUrl('postgres://db:5432/x'), 'postgres://db:5432/x');
  assert.equal(redactUrl('postgres://u:p@[bad'), 'postgres://<unparseable url hidden>');
});

test('an unreachable DATABASE_URL gives a database error that never shows the password', async () => {
  await assert.rejects(
    openDatabase({ databaseUrl: 'postgres://app:hunter2@127.0.0.1:1/db' }),
    (error: unknown) =>
      isPlateauError(error) &&
      error.code === 'PLATEAU_DATABASE' &&
      error.message.includes('app:****@127.0.0.1:1') &&
      !error.message.includes('hunter2') &&
      /DATABASE_URL/.test(error.hint ?? ''),
  );
});
