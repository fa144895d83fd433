// A data directory initdb made once, copied for each new embedded cluster instead of running
// initdb again.
//
// Why: initdb bootstraps the catalogs and the template databases, a second or two of CPU and
// several of wall time before every `plateau run` (and before each test file that needs a
// database). Copying the directory it made takes a tenth of that. The copy is made before the
// first server ever starts in it, so it holds no pid file, WAL of a run, or data.
//
// The template lives beside the clusters (the temp directory by default), one per user and per
// key (the PostgreSQL binary and the initdb settings): `plateau-pg-template-<uid>-<key>`. It is written under another name
// and renamed into place, so a reader never sees half of one; two processes making one at once
// each write their own and the first rename wins. A template made by another key (an upgraded
// package) is removed when a new one is saved. Each cluster still gets its own password: the
// template's, kept in a file inside it that only its owner reads, is replaced once the server
// is up (`ALTER ROLE`), and the file is not left in the cluster's copy.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The file in a template that holds its superuser's password (removed from each copy). */
const PASSWORD_FILE = 'plateau-template-password';
const PREFIX = 'plateau-pg-template-';

/** Where the template for `postgresBinary` and `settings` lives in `parent`, or would. */
export async function templateDir(
  parent: string,
  postgresBinary: string,
  settings: readonly string[],
): Promise<string> {
  const binary = await stat(postgresBinary);
  const key = createHash('sha256')
    .update(JSON.stringify([postgresBinary, binary.size, binary.mtimeMs, settings]))
    .digest('hex')
    .slice(0, 16);
  return join(parent, `${PREFIX}${userInfo().uid}-${key}`);
}

/**
 * Copies the template at `template` into `dataDir` (which must not exist), keeping owners and
 * modes (`cp -a`: under root the files belong to the `postgres` user); returns the template's
 * password, or undefined when there is no complete template.
 */
export async function copyTemplate(template: string, dataDir: string): Promise<string | undefined> {
  let password: string;
  try {
    password = (await readFile(join(template, PASSWORD_FILE), 'utf8')).trim();
  } catch {
    return undefined;
  }
  if (password === '') return undefined;
  await run('cp', ['-a', template, dataDir]);
  await rm(join(dataDir, PASSWORD_FILE), { force: true });
  return password;
}

/**
 * Saves `dataDir`, fresh from initdb and never started, as the template at `template`, with
 * the password initdb was given. Best effort: a template another process saved first is kept,
 * and any failure leaves no template (the next cluster runs initdb again).
 */
export async function saveTemplate(template: string, dataDir: string, password: string): Promise<void> {
  const staging = `${template}.staging-${randomBytes(4).toString('hex')}`;
  try {
    await run('cp', ['-a', dataDir, staging]);
    await writeFile(join(staging, PASSWORD_FILE), `${password}\n`, { mode: 0o600 });
    await rename(staging, template);
  } catch {
    await rm(staging, { recursive: true, force: true });
    return;
  }
  await removeOtherTemplates(template);
}

/** Removes this user's templates of other keys: those an earlier package left behind. */
async function removeOtherTemplates(template: string): Promise<void> {
  const ownPrefix = `${PREFIX}${userInfo().uid}-`;
  const entries = await readdir(dirname(template)).catch(() => [] as string[]);
  await Promise.all(
    entries
      .filter(
        (name) => name.startsWith(ownPrefix) && name !== basename(template) && !name.includes('.staging-'),
      )
      .map((name) => rm(join(dirname(template), name), { recursive: true, force: true })),
  );
}
