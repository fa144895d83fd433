// plateau's version, from package.json (one place for run manifests and the engine's User-Agent).
import { readFileSync } from 'node:fs';

export const PLATEAU_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
