// Where the real k6 output fixtures are: shared/fixtures/k6-real beside the checkout (CI lays
// shared/ there), beside the local repository it was cloned from, or PLATEAU_SHARED_DIR.
// They are never copied into the repo.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A local clone's origin (a path), whose parent may hold shared/. */
function originPath(): string | undefined {
  try {
    const url = execFileSync('git', ['config', '--get', 'remote.origin.url'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    const path = url.startsWith('file://') ? fileURLToPath(url) : url;
    return isAbsolute(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Where shared/ may be: PLATEAU_SHARED_DIR, beside the checkout, beside its origin. */
function sharedCandidates(): string[] {
  const origin = originPath();
  return [
    process.env.PLATEAU_SHARED_DIR,
    join(root, '..', 'shared'),
    origin ? join(origin, '..', 'shared') : undefined,
  ].filter((c): c is string => c !== undefined);
}

/** `shared/<relative>` in the first place that has it, or undefined. */
export function sharedPath(relative: string): string | undefined {
  return sharedCandidates()
    .map((shared) => join(shared, relative))
    .find((path) => existsSync(path));
}

/** The k6-real fixture directory, with a trailing slash. Throws a clear error when absent. */
export function k6RealFixtures(): string {
  const dir = sharedPath(join('fixtures', 'k6-real'));
  if (dir) return `${dir}/`;
  throw new Error(
    `the real k6 fixtures are not in ${sharedCandidates()
      .map((c) => join(c, 'fixtures', 'k6-real'))
      .join(' or ')}: put shared/ beside the checkout or set PLATEAU_SHARED_DIR`,
  );
}
