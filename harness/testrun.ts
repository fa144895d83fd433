// A k6-operator TestRun for running one of plateau's scripts on Kubernetes, split over
// several k6 runners by execution segments, with each runner's CSV kept for
// `plateau analyze <one.csv.gz> <two.csv.gz> …` (which merges instances of one test).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ConfigProblem, ERROR_CODES, PlateauError } from '../contract/index.ts';
import { commonJsExports } from '../lib/commonjs-exports.ts';
import { buildK6Scripts, PROJECT_ROOT, SCRIPT_NAMES, type ScriptName } from './build-scripts.ts';

/** A ConfigMap holds at most 1 MiB: the operator's own limit for a script served this way. */
const CONFIG_MAP_LIMIT = 1_048_576;
/** Kubernetes object names (RFC 1123 labels, as the operator's job names derive from them). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export interface TestRunOptions {
  script: string;
  /** How many k6 runners share the test (each gets an equal execution segment). */
  parallelism: number;
  name: string;
  namespace?: string;
  /** `-e` variables for the script. */
  env: Record<string, string>;
  image: string;
  /** The PersistentVolumeClaim each runner writes its CSV to, under /results. */
  resultsClaim: string;
}

/** Checks the options, naming every problem at once. */
export function checkTestRunOptions(options: TestRunOptions): void {
  const problems: ConfigProblem[] = [];
  if (!(SCRIPT_NAMES as readonly string[]).includes(options.script)) {
    problems.push({
      setting: '--script',
      message: `"${options.script}" is not one of plateau's scripts`,
      hint: `use one of ${SCRIPT_NAMES.join(', ')}`,
    });
  }
  if (!Number.isInteger(options.parallelism) || options.parallelism < 1 || options.parallelism > 1000) {
    problems.push({
      setting: '--parallelism',
      message: `"${options.parallelism}" is not a number of runners`,
      hint: 'use a whole number from 1 to 1000',
    });
  }
  for (const [setting, value] of [
    ['--name', options.name],
    ['--namespace', options.namespace],
    ['--results-claim', options.resultsClaim],
  ] as const) {
    if (value !== undefined && (!DNS_LABEL.test(value) || value.length > 53)) {
      problems.push({
        setting,
        message: `"${value}" is not a Kubernetes name`,
        hint: 'use lowercase letters, digits and -, starting and ending with a letter or digit, at most 53 characters',
      });
    }
  }
  for (const [key, value] of Object.entries(options.env)) {
    // The operator splits `arguments` on whitespace: a value with a space would break apart.
    if (/\s/.test(value)) {
      problems.push({
        setting: '-e',
        message: `${key}="${value}" contains whitespace, which the operator's argument list cannot carry`,
        hint: 'use values without spaces (STEPS=20,40,60)',
      });
    }
  }
  if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'testrun options');
}

/**
 * The manifest: a ConfigMap with the bundled script and a TestRun that runs it on
 * `parallelism` runners. Each runner writes `/results/<pod name>.csv.gz` to the claim
 * (K6_CSV_FILENAME, with the pod name from the downward API) and tags its samples with
 * `testid`.
 */
export async function testRunManifest(options: TestRunOptions): Promise<string> {
  checkTestRunOptions(options);
  const script = options.script as ScriptName;
  const [built] = await buildK6Scripts({ entries: [join(PROJECT_ROOT, 'scripts', `${script}.ts`)] });
  const source = await readFile(built!.outFile, 'utf8');
  const file = `${script}.js`;
  if (Buffer.byteLength(source) > CONFIG_MAP_LIMIT) {
    throw new PlateauError(
      ERROR_CODES.INPUT,
      `the ${file} bundle is larger than a ConfigMap can hold (1 MiB)`,
      {
        hint: 'serve it from a volumeClaim instead (see the k6-operator documentation)',
      },
    );
  }
  const metadata = (name: string) => ({
    name,
    ...(options.namespace ? { namespace: options.namespace } : {}),
  });
  const args = [
    ...Object.entries(options.env).map(([key, value]) => `-e ${key}=${value}`),
    `--tag testid=${options.name}`,
    '--out csv',
  ].join(' ');
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: metadata(options.name),
    data: { [file]: source },
  };
  const testRun = {
    apiVersion: 'k6.io/v1alpha1',
    kind: 'TestRun',
    metadata: metadata(options.name),
    spec: {
      parallelism: options.parallelism,
      script: { configMap: { name: options.name, file } },
      arguments: args,
      runner: {
        image: options.image,
        env: [
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'K6_CSV_FILENAME', value: '/results/$(POD_NAME).csv.gz' },
        ],
        volumeMounts: [{ name: 'results', mountPath: '/results' }],
        volumes: [{ name: 'results', persistentVolumeClaim: { claimName: options.resultsClaim } }],
      },
    },
  };
  const header = [
    `# plateau ${script} on ${options.parallelism} k6 runners (k6-operator TestRun).`,
    `# Apply: kubectl apply -f <this file>. Each runner runs an equal execution segment and writes`,
    `# /results/<pod>.csv.gz to the PersistentVolumeClaim ${options.resultsClaim} (create it first,`,
    '# ReadWriteMany). Then copy the files out and analyse them as one test:',
    '#   plateau analyze runner-1.csv.gz runner-2.csv.gz …',
  ].join('\n');
  // lineWidth 0: never fold a line (the script must stay byte for byte).
  // Imported here, not with the CLI: only this command writes YAML.
  const { stringify } = commonJsExports(await import('yaml'));
  const yaml = (value: unknown) => stringify(value, { lineWidth: 0 });
  return `${header}\n---\n${yaml(configMap)}---\n${yaml(testRun)}`;
}
