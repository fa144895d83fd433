// Where the real k6 output fixtures are: ../shared/fixtures/k6-real beside the checkout
// (CI lays shared/ there too), or PLATEAU_SHARED_DIR. They are never copied into the repo.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shared = process.env.PLATEAU_SHARED_DIR ?? join(root, '..', 'shared');

/** The k6-real fixture directory, with a trailing slash. Throws a clear error when absent. */
export function k6RealFixtures(): string {
  const dir = join(shared, 'fixtures', 'k6-real');
  if (!existsSync(dir)) {
    throw new Error(
      `the real k6 fixtures are not at ${dir}: put shared/ beside the checkout or set PLATEAU_SHARED_DIR`,
    );
  }
  return `${dir}/`;
}
