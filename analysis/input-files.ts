// The files analysis is given: plateau's JSON files read by their kind and schema, and input
// paths stated with a clear error when missing or empty.
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ERROR_CODES, PlateauError, SCHEMA_VERSIONS } from '../contract/index.ts';

/**
 * A plateau JSON file (run.json, server.json, analysis.json…) checked to be of `kind` and of
 * a schemaVersion this plateau reads; undefined when the file does not exist. A file that
 * cannot be read, is not JSON, is of another kind or is newer is a PlateauError saying so.
 */
export async function readJson<T>(path: string, kind: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw new PlateauError(ERROR_CODES.INPUT, `cannot read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let parsed: { kind?: string; schemaVersion?: number };
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new PlateauError(ERROR_CODES.INPUT, `${path} is not valid JSON (${(error as Error).message})`, {
      hint:
        kind === 'plateau.run'
          ? `it was cut short (plateau writes it whole, so something else wrote or truncated it); nothing was changed. The client side can still be analysed alone: plateau analyze ${join(dirname(path), 'k6.csv.gz')}`
          : 'it may have been cut short; rerun the step that writes it',
      cause: error,
    });
  }
  const known = SCHEMA_VERSIONS[kind as keyof typeof SCHEMA_VERSIONS];
  if (parsed.kind !== kind) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `${path} is not a ${kind} file (kind ${JSON.stringify(parsed.kind)})`,
    );
  }
  if ((parsed.schemaVersion ?? 0) > known) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `${path} has schemaVersion ${parsed.schemaVersion}, newer than this plateau reads (${known})`,
      {
        hint: 'upgrade plateau to analyse it',
      },
    );
  }
  return parsed as T;
}

/** Stats an input path: a clear error when it is missing, or an empty file. */
export async function inputStat(path: string, hint: string): Promise<Awaited<ReturnType<typeof stat>>> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    throw new PlateauError(ERROR_CODES.INPUT, `${path} does not exist`, { hint, cause: error });
  }
  if (!info.isDirectory() && info.size === 0)
    throw new PlateauError(ERROR_CODES.INPUT, `${path} is empty`, { hint: 'the run wrote no samples' });
  return info;
}
