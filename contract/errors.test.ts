import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERROR_CODES, EXIT_CODES, PlateauError, RUN_ENDINGS } from './index.ts';

test('a PlateauError carries the exit status of its code, from the one table', () => {
  const exit = (code: (typeof ERROR_CODES)[keyof typeof ERROR_CODES]) => new PlateauError(code, 'x').exitCode;
  assert.equal(exit(ERROR_CODES.INVALID_CONFIG), 104);
  assert.equal(exit(ERROR_CODES.INPUT), 104);
  assert.equal(exit(ERROR_CODES.INTERRUPTED), 105);
  assert.equal(exit(ERROR_CODES.DATABASE), EXIT_CODES.failure);
  assert.equal(exit(ERROR_CODES.CHILD_FAILED), EXIT_CODES.failure);
  assert.equal(PlateauError.invalidConfig([{ setting: 'A', message: 'm', hint: 'h' }]).exitCode, 104);
});

test("the table keeps k6's codes where the meaning is k6's", () => {
  assert.deepEqual(
    [
      EXIT_CODES.thresholdsFailed,
      EXIT_CODES.setupTimeout,
      EXIT_CODES.teardownTimeout,
      EXIT_CODES.invalidConfig,
    ],
    [99, 100, 101, 104],
  );
  assert.deepEqual(
    [EXIT_CODES.interrupted, EXIT_CODES.scriptException, EXIT_CODES.testAborted, EXIT_CODES.testFailed],
    [105, 107, 108, 110],
  );
});

test('each way a study ends has its status and exit code in one table, and its error carries the same code', () => {
  assert.deepEqual(
    Object.fromEntries(Object.entries(RUN_ENDINGS).map(([reason, e]) => [reason, [e.status, e.exitCode]])),
    {
      completed: ['completed', 0],
      interrupted: ['interrupted', 105],
      'service-died': ['failed', 120],
      'database-died': ['failed', 121],
      'generator-died': ['failed', 122],
      'disk-full': ['failed', 123],
      failed: ['failed', 1],
    },
  );
  const exit = (code: (typeof ERROR_CODES)[keyof typeof ERROR_CODES]) => new PlateauError(code, 'x').exitCode;
  assert.equal(exit(ERROR_CODES.SERVICE_DIED), RUN_ENDINGS['service-died'].exitCode);
  assert.equal(exit(ERROR_CODES.DATABASE_DIED), RUN_ENDINGS['database-died'].exitCode);
  assert.equal(exit(ERROR_CODES.GENERATOR_DIED), RUN_ENDINGS['generator-died'].exitCode);
  assert.equal(exit(ERROR_CODES.DISK_FULL), RUN_ENDINGS['disk-full'].exitCode);
});
