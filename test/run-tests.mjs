#!/usr/bin/env node
// Finds every *.test.ts (unit tests beside their source, suites under test/) and runs each
// file in its own `node --test` process, several at once. Arguments filter by path substring;
// `--jobs N` sets how many files run at once (default 5, or PLATEAU_TEST_JOBS); `--cpu` adds
// each file's CPU-seconds to its line and sums them by kind at the end: from a cgroup v1
// `cpuacct` group of its own where the machine lets us make one (root), which counts every
// process the file started, waited for or not (PostgreSQL's daemons, a service left to its
// `after` hook); otherwise from GNU time, which counts only the processes waited for.
//
// A full run (no filter) also runs the static checks, the type check and biome, as jobs
// beside the end-to-end suites (which mostly wait), not before them: they cost ~40 s of CPU
// that the waiting suites leave idle. `--no-checks` leaves them out.
//
// The files are first bundled by esbuild in one call, each into one module (npm packages left
// outside, `import.meta.url` kept as the source file's: bin/cli-bundle.js), because loading a
// test's hundred-odd TypeScript modules one by one through tsx cost each file a second of CPU
// before its first test; stack traces still name the sources (source maps).
//
// Most end-to-end suites spend their time waiting: a study at 40 requests/s against a pool of
// two 50 ms connections uses a fifth of a core. So they share the machine, at most
// LOAD_SLOTS of them at once (a file says `test-run: load` in its opening comment), with the
// unit files and the static checks filling the other places. A file whose assertions depend
// on having the cores to itself (a rate the generator must hold, a CPU that must be the limit,
// timings compared between two engines) says `test-run: solo` and runs first, with nothing
// beside it.
//
// Nothing runs at a lower or higher CPU priority: each file runs in a session of its own (so
// that an interrupted run can end its whole process group), and where the kernel has
// autogroups (sched(7), this machine's) each session is a scheduling group that shares the CPU
// equally with the others whatever the nice values inside it. Giving the groups themselves
// priorities (/proc/<pid>/autogroup) was tried, to run the solo files beside the others at a
// higher one, and so was running the unit groups beside the solo files in a cgroup with
// `cpu.idle`: each failed a timing assertion somewhere (docs/architecture.md, "Tests").
//
// Files start longest first (test/durations.json, the seconds each took in the last full
// run; `--save-durations` rewrites it), so the longest suites never start last. Each file's
// processes carry PLATEAU_TEST_MARK=`<its path> in <the run's TMPDIR>`, inherited by all they
// start, so that a test looking for processes it left behind (test/helpers/processes.ts) sees
// only its own, not another file's nor those a killed earlier run left. Each file's
// output is printed whole when it ends, never interleaved. The files share one TMPDIR for the
// run, removed at the end when everything passed (kept and named otherwise), so no test
// leaves temporary files behind.
import { spawn } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { keepImportMetaUrl } from '../bin/cli-bundle.js';

const ROOTS = ['lib', 'contract', 'scripts', 'engine', 'target-service', 'harness', 'analysis', 'test'];
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(HERE);
const DURATIONS_FILE = join(HERE, 'durations.json');
const REPORTER = join(HERE, 'helpers', 'count-reporter.mjs');
/** At most this many `test-run: load` files at once. */
const LOAD_SLOTS = 3;
/** The static checks of a full run: a name (its key in durations.json) and its command. */
const CHECKS = [
  { file: 'check: tsc -p . && tsc -p scripts', command: 'npm run --silent typecheck' },
  { file: 'check: biome check .', command: 'npm run --silent lint' },
];
/** Where each file's cpuacct group goes under `--cpu`, when cgroup v1's cpuacct is writable. */
const CPUACCT = (() => {
  const root = '/sys/fs/cgroup/cpuacct';
  try {
    accessSync(join(root, 'cgroup.procs'), constants.W_OK);
    return join(root, `plateau-tests-${process.pid}`);
  } catch {
    return undefined;
  }
})();
/** Seconds assumed for a file test/durations.json does not list, by its kind. */
const UNKNOWN_SECONDS = { solo: 30, load: 20, unit: 1 };

function find(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'fixtures' ? [] : find(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * How a file runs, from a `test-run:` line in its opening comment: its kind (`solo`, `load` or
 * `unit`), and whether a unit file may share a process with others (`grouped`): unit files
 * beside their source do, unless they say `test-run: own-process`; those under test/ start
 * services and PostgreSQL, and each has a process of its own.
 */
function kindOf(file) {
  const head = readFileSync(file, 'utf8').slice(0, 2000);
  const match = /^\/\/ test-run: (solo|load|own-process)\b/m.exec(head);
  const kind = match?.[1] === 'solo' || match?.[1] === 'load' ? match[1] : 'unit';
  return { kind, grouped: kind === 'unit' && !match && !file.startsWith('test/') };
}

/**
 * The jobs for `files`: each grouped unit file joins the one job of its top directory
 * (`units: engine/`), one process that imports their bundles (its entry written into
 * `bundleDir`), since starting a process and loading a bundle cost each small file more CPU
 * than its tests; every other file is a job of its own.
 */
function groupUnits(files, bundles, bundleDir) {
  const jobs = [];
  const groups = new Map();
  for (const f of files) {
    if (!f.grouped) {
      jobs.push({ ...f, bundle: bundles.get(f.file) });
      continue;
    }
    const top = f.file.split('/')[0];
    let group = groups.get(top);
    if (!group) {
      group = { name: `units: ${top}/`, members: [] };
      groups.set(top, group);
    }
    group.members.push(f);
  }
  for (const [top, group] of groups) {
    const entry = join(bundleDir, `units-${top}.mjs`);
    // Static imports: every bundle is read and linked before any module runs, so that no
    // file's loading runs beside another's tests (a dynamic import() of the next file would).
    const imports = group.members.map(
      (f) => `import ${JSON.stringify(pathToFileURL(bundles.get(f.file)).href)};`,
    );
    writeFileSync(entry, `${imports.join('\n')}\n`);
    jobs.push({
      file: `${group.name} (${group.members.length} files)`,
      durationKey: group.name,
      kind: 'unit',
      bundle: entry,
      expected: group.members.reduce((sum, f) => sum + f.expected, 0),
    });
  }
  return jobs;
}

function parseArgs(argv) {
  const options = {
    filters: [],
    jobs: Number(process.env.PLATEAU_TEST_JOBS ?? 5),
    saveDurations: false,
    checks: true,
    cpu: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--save-durations') options.saveDurations = true;
    else if (arg === '--no-checks') options.checks = false;
    else if (arg === '--cpu') options.cpu = true;
    else if (arg === '--jobs' || arg.startsWith('--jobs=')) {
      options.jobs = Number(arg.includes('=') ? arg.slice('--jobs='.length) : argv[++i]);
    } else options.filters.push(arg);
  }
  if (options.cpu && !CPUACCT && !existsSync('/usr/bin/time')) {
    console.error(
      '--cpu needs a writable cgroup v1 cpuacct hierarchy (run as root) or GNU time at /usr/bin/time: apt-get install time, or leave --cpu out',
    );
    process.exit(2);
  }
  if (!Number.isInteger(options.jobs) || options.jobs < 1) {
    console.error(`--jobs (or PLATEAU_TEST_JOBS) must be a whole number of files at once, at least 1`);
    process.exit(2);
  }
  return options;
}

function readDurations() {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
  } catch {
    return {};
  }
}

/**
 * Bundles the test files into `outdir` (under node_modules, so that their npm imports resolve
 * as from the sources); returns each file's bundle.
 */
async function bundleTests(files, outdir) {
  await build({
    absWorkingDir: ROOT,
    entryPoints: files,
    outbase: ROOT,
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'error',
    plugins: [keepImportMetaUrl],
  });
  return new Map(files.map((file) => [file, join(outdir, file.replace(/\.ts$/, '.mjs'))]));
}

/** How many cpuacct groups `--cpu` has made. */
let groupCount = 0;

/** The files' processes still running. */
const running = new Set();
let interrupted;

/**
 * SIGINT or SIGTERM: no new file starts, each running file's process group gets SIGTERM (its
 * `after` hooks and plateau's own cleanup stop what it started), then SIGKILL after 10 s.
 */
function interrupt(signal) {
  if (interrupted) return;
  interrupted = signal;
  console.log(`\n${signal}: stopping ${running.size} running test files`);
  const killGroups = (how) => {
    for (const child of running) {
      try {
        process.kill(-child.pid, how);
      } catch {
        // Already gone.
      }
    }
  };
  killGroups('SIGTERM');
  setTimeout(() => killGroups('SIGKILL'), 10_000).unref();
}
process.on('SIGINT', () => interrupt('SIGINT'));
process.on('SIGTERM', () => interrupt('SIGTERM'));

/**
 * Runs one file's bundle, or a check's command (`command`); resolves with its exit code,
 * output, counts (none for a check) and seconds.
 */
function runFile(file, bundle, tmp, command, cpu) {
  const base = join(tmp, file.replace(/[^\w.-]+/g, '_'));
  const countsFile = `${base}.counts.json`;
  const cpuFile = `${base}.cpu`;
  const started = performance.now();
  const [fileProgram, fileArgs] = command
    ? ['sh', ['-c', command]]
    : [
        process.execPath,
        [
          '--enable-source-maps',
          '--test',
          '--test-timeout=300000',
          '--test-reporter=spec',
          '--test-reporter-destination=stdout',
          `--test-reporter=${REPORTER}`,
          `--test-reporter-destination=${countsFile}`,
          bundle,
        ],
      ];
  // --cpu: the file's own cpuacct group, joined by its first process before it runs the file
  // (`exec`), so that everything it starts is counted; or GNU time, which reports the CPU of
  // the file's process and of every process it waited for (its services, engines and
  // PostgreSQL).
  const group = cpu && CPUACCT ? join(CPUACCT, String(++groupCount)) : undefined;
  if (group) mkdirSync(group, { recursive: true });
  const [program, args] = group
    ? ['sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', group, fileProgram, ...fileArgs]]
    : cpu
      ? ['/usr/bin/time', ['-f', '%U %S', '-o', cpuFile, fileProgram, ...fileArgs]]
      : [fileProgram, fileArgs];
  const child = spawn(
    program,
    args,
    // Its own process group, so that an interrupted run ends the file's whole tree (its
    // services, engines and PostgreSQL), not only the test process.
    {
      env: { ...process.env, TMPDIR: tmp, PLATEAU_TEST_MARK: `${file} in ${tmp}` },
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  running.add(child);
  const output = [];
  child.stdout.on('data', (chunk) => output.push(chunk));
  child.stderr.on('data', (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      let counts;
      try {
        counts = JSON.parse(readFileSync(countsFile, 'utf8'));
      } catch {
        counts = undefined;
      }
      let cpuSeconds;
      if (group) {
        try {
          cpuSeconds = Number(readFileSync(join(group, 'cpuacct.usage'), 'utf8')) / 1e9;
          rmdirSync(group);
        } catch {
          // A process the file left running keeps its group; the run's end says so.
        }
      } else if (cpu) {
        try {
          const [user, system] = readFileSync(cpuFile, 'utf8').trim().split(/\s+/).slice(-2).map(Number);
          cpuSeconds = user + system;
        } catch {
          cpuSeconds = undefined;
        }
      }
      resolve({
        file,
        cpuSeconds,
        code: code ?? (signal ? 128 : 1),
        signal,
        output: Buffer.concat(output).toString(),
        counts,
        seconds: (performance.now() - started) / 1000,
      });
    });
  });
}

/**
 * Runs the files: solo ones one at a time, first, alone; then the `load` files, at most
 * LOAD_SLOTS at once, with unit files and checks filling the other places up to `jobs`.
 */
async function runAll(files, jobs, tmp, cpu, onDone) {
  const solo = files.filter((f) => f.kind === 'solo');
  const load = files.filter((f) => f.kind === 'load');
  const units = files.filter((f) => f.kind === 'unit');
  const results = [];
  let soloRunning = false;
  let loadRunning = 0;
  let unitsRunning = 0;
  await new Promise((resolveAll) => {
    const start = (f, onEnd) => {
      runFile(f.file, f.bundle, tmp, f.command, cpu).then((result) => {
        result.durationKey = f.durationKey ?? f.file;
        onEnd();
        result.kind = f.command ? 'check' : f.kind;
        onDone(result, result.kind);
        results.push(result);
        startNext();
      });
    };
    const startNext = () => {
      const soloPhase = solo.length > 0 || soloRunning;
      if (interrupted || (!soloPhase && load.length === 0 && units.length === 0)) {
        if (!soloRunning && loadRunning === 0 && unitsRunning === 0) resolveAll();
        return;
      }
      if (soloPhase) {
        if (!soloRunning) {
          soloRunning = true;
          start(solo.shift(), () => {
            soloRunning = false;
          });
        }
        return;
      }
      while (load.length > 0 && loadRunning < LOAD_SLOTS && loadRunning + unitsRunning < jobs) {
        loadRunning++;
        start(load.shift(), () => loadRunning--);
      }
      while (units.length > 0 && loadRunning + unitsRunning < jobs) {
        unitsRunning++;
        start(units.shift(), () => unitsRunning--);
      }
    };
    startNext();
  });
  return results;
}

const options = parseArgs(process.argv.slice(2));
const durations = readDurations();
const files = ROOTS.flatMap(find)
  .filter((file) => options.filters.length === 0 || options.filters.some((f) => file.includes(f)))
  .map((file) => {
    const { kind, grouped } = kindOf(file);
    return { file, kind, grouped, expected: durations[file] ?? UNKNOWN_SECONDS[kind] };
  });
if (files.length === 0) {
  console.error(`no test files match ${options.filters.join(' ')}`);
  process.exit(1);
}
const testFileCount = files.length;

const cpuText = (result) =>
  result.cpuSeconds === undefined ? '' : `, ${result.cpuSeconds.toFixed(1)} CPU-s`;
const started = performance.now();
const tmp = mkdtempSync(join(tmpdir(), 'plateau-tests-'));
// As open as /tmp itself: under root, PostgreSQL runs as the `postgres` user and must read
// and write its files here.
chmodSync(tmp, 0o1777);
const bundleDir = join(ROOT, 'node_modules', '.cache', 'plateau', `tests-${process.pid}`);
const bundles = await bundleTests(
  files.map((f) => f.file),
  bundleDir,
);
process.on('exit', () => rmSync(bundleDir, { recursive: true, force: true }));
const jobs = groupUnits(files, bundles, bundleDir);
for (const job of jobs) job.expected = durations[job.durationKey ?? job.file] ?? job.expected;
if (options.checks && options.filters.length === 0) {
  for (const check of CHECKS) jobs.push({ ...check, kind: 'unit', expected: durations[check.file] ?? 40 });
}
jobs.sort((a, b) => b.expected - a.expected || a.file.localeCompare(b.file));
const kinds = { solo: 0, load: 0, unit: 0 };
for (const f of files) kinds[f.kind]++;
const checkCount = jobs.filter((job) => job.command).length;
const unitJobs = jobs.filter((job) => job.kind === 'unit' && !job.command).length;
console.log(
  `${testFileCount} test files: ${kinds.solo} alone, then ${kinds.load} end-to-end (≤ ${LOAD_SLOTS} at once) ` +
    `and ${kinds.unit} unit files in ${unitJobs} processes${checkCount > 0 ? `, with ${checkCount} static checks` : ''}, ${options.jobs} jobs at once`,
);
let finished = 0;
const results = await runAll(jobs, options.jobs, tmp, options.cpu, (result, kind) => {
  finished++;
  const mark = result.code === 0 ? '✔' : '✖';
  process.stdout.write(result.output);
  const elapsed = ((performance.now() - started) / 1000).toFixed(0);
  console.log(
    `${mark} ${result.file} (${kind}, ${result.seconds.toFixed(1)} s${cpuText(result)}) · ${finished}/${jobs.length} jobs · ${elapsed} s\n`,
  );
});

const total = { pass: 0, fail: 0, skip: 0, todo: 0 };
const skipped = [];
const failedFiles = [];
for (const result of results) {
  if (result.counts) {
    for (const key of Object.keys(total)) total[key] += result.counts[key];
    skipped.push(...result.counts.skipped.map((line) => `${result.file}: ${line}`));
  }
  if (result.code !== 0) {
    const failures =
      result.counts?.failed.join('; ') || `exit ${result.code}${result.signal ? ` (${result.signal})` : ''}`;
    failedFiles.push(`${result.file}: ${failures}`);
  }
}
const seconds = (performance.now() - started) / 1000;
console.log(`tests ${total.pass + total.fail + total.skip + total.todo}`);
console.log(`pass ${total.pass}`);
console.log(`fail ${total.fail}`);
console.log(`skipped ${total.skip} (not counted as passing)`);
for (const line of skipped) console.log(`  skipped: ${line}`);
if (total.todo > 0) console.log(`todo ${total.todo}`);
console.log(`duration ${seconds.toFixed(1)} s`);
if (options.cpu) {
  const byKind = {};
  for (const r of results) byKind[r.kind] = (byKind[r.kind] ?? 0) + (r.cpuSeconds ?? 0);
  console.log(
    `CPU-seconds: ${Object.entries(byKind)
      .map(([k, s]) => `${k} ${s.toFixed(0)}`)
      .join(
        ', ',
      )}${CPUACCT ? ' (cgroup cpuacct: every process of each file)' : ' (GNU time: the processes each file waited for)'}`,
  );
  if (CPUACCT) {
    try {
      rmdirSync(CPUACCT);
    } catch {
      console.log(`a file left processes running: their cpuacct groups are kept under ${CPUACCT}`);
    }
  }
}
console.log('slowest files:');
for (const result of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 8))
  console.log(`  ${result.seconds.toFixed(1).padStart(6)} s  ${result.file}`);

if (options.saveDurations && options.filters.length === 0) {
  const measured = Object.fromEntries(
    results
      .map((r) => [r.durationKey, Math.round(r.seconds * 10) / 10])
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(measured, null, 2)}\n`);
  console.log(`wrote ${DURATIONS_FILE}`);
}

if (interrupted) {
  console.log(`interrupted by ${interrupted}: ${jobs.length - results.length} jobs not run`);
  process.exit(interrupted === 'SIGINT' ? 130 : 143);
}
if (failedFiles.length > 0) {
  console.log(`\nFAILED (${failedFiles.length} files); their temporary files are kept in ${tmp}:`);
  for (const line of failedFiles) console.log(`  ${line}`);
  process.exit(1);
}
rmSync(tmp, { recursive: true, force: true });
