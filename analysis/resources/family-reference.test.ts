import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { FAMILY_REFERENCE_HEADER, familyReferenceRows } from './family-reference.ts';

/** A Markdown table row's cells, trimmed: the formatter pads them. */
const cells = (row: string) => row.split('|').map((cell) => cell.trim());

test("docs/meters.md's family table is the registry", () => {
  const docs = readFileSync(new URL('../../docs/meters.md', import.meta.url), 'utf8');
  const section = docs.slice(
    docs.indexOf('<!-- BEGIN meter families'),
    docs.indexOf('<!-- END meter families'),
  );
  const rows = section.split('\n').filter((line) => line.startsWith('| ') && !/^\|\s*-/.test(line));
  assert.deepEqual(
    rows.map(cells),
    [FAMILY_REFERENCE_HEADER, ...familyReferenceRows()].map(cells),
    'run `npm run docs:meters`',
  );
});
