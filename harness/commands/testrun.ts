// `plateau testrun`: a k6-operator TestRun manifest for running a script on Kubernetes.
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ConfigProblem } from '../../contract/index.ts';
import { PlateauError } from '../../contract/index.ts';
import {
  readBreakpointSettings,
  readCapacitySettings,
  readConcurrencySettings,
  readConstantRateSettings,
} from '../../scripts/lib/profiles.ts';
import { type Env, SettingsError } from '../../scripts/lib/settings.ts';
import { SCRIPT_NAMES } from '../build-scripts.ts';
import { testRunManifest } from '../testrun.ts';
import { parseEnvFlags } from './engine.ts';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const SETTINGS_READERS: Readonly<Record<string, (env: Env) => unknown>> = {
  capacity: readCapacitySettings,
  'constant-rate': readConstantRateSettings,
  breakpoint: readBreakpointSettings,
  concurrency: readConcurrencySettings,
};

/**
 * The script's own settings check, run here rather than in every runner pod, and a
 * BASE_URL, which a cluster needs (the default, 127.0.0.1, is the runner pod itself).
 */
function scriptSettingProblems(script: string, env: Env): ConfigProblem[] {
  const read = SETTINGS_READERS[script];
  if (!read) {
    return [
      {
        setting: '--script',
        message: `"${script}" is not a plateau script`,
        hint: `use ${SCRIPT_NAMES.join(', ')}`,
      },
    ];
  }
  const problems: ConfigProblem[] = [];
  if (!env.BASE_URL) {
    problems.push({
      setting: '-e BASE_URL',
      message: 'is required for a TestRun',
      hint: "give the service's address as the runner pods reach it, e.g. -e BASE_URL=http://statement-api:3000",
    });
  }
  try {
    read(env);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    for (const problem of error.problems) {
      const colon = problem.indexOf(':');
      problems.push({
        setting: `-e ${problem.slice(0, colon)}`,
        message: problem.slice(colon + 1).trim(),
        hint: 'see docs/scripts.md for each setting',
      });
    }
  }
  return problems;
}

export function registerTestRun(program: Command): void {
  program
    .command('testrun')
    .summary('write a k6-operator TestRun manifest to run a script on Kubernetes')
    .description(
      `Writes a k6-operator TestRun and the ConfigMap holding the bundled script: the test runs
on --parallelism k6 runners, each on an equal execution segment, and each writes its CSV to
/results/<pod>.csv.gz on a PersistentVolumeClaim. Copy the files out and analyse them as one
test with plateau analyze a.csv.gz b.csv.gz … (the service's /steps is not collected in this
mode: the analysis is client-side).`,
    )
    .option('--script <name>', `which script: ${SCRIPT_NAMES.join(', ')}`, 'capacity')
    .option('--parallelism <n>', 'k6 runners sharing the test', '2')
    .option(
      '--name <name>',
      'name of the TestRun, its ConfigMap and the testid tag (default: plateau-<script>)',
    )
    .option('--namespace <ns>', 'Kubernetes namespace of both objects')
    .option('-e, --env <NAME=value>', 'variable for the script, as k6 -e (repeatable)', collect, [])
    .option('--image <image>', 'k6 runner image', 'grafana/k6:latest')
    .option('--results-claim <pvc>', 'PersistentVolumeClaim (ReadWriteMany) for the CSVs', 'plateau-results')
    .option('-o, --out <file>', 'where to write the manifest (- for stdout)', '-')
    .addHelpText(
      'after',
      `
Examples:
  plateau testrun --parallelism 4 -e BASE_URL=http://statement-api:3000 -e STEPS=200,400,600 -o capacity.yaml
  kubectl apply -f capacity.yaml`,
    )
    .action(async (options: Record<string, string | string[]>) => {
      const problems: ConfigProblem[] = [];
      const env = parseEnvFlags(options.env as string[], problems);
      const script = String(options.script);
      problems.push(...scriptSettingProblems(script, env));
      if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'flags');
      const manifest = await testRunManifest({
        script,
        parallelism: Number(options.parallelism),
        name: options.name ? String(options.name) : `plateau-${script}`,
        ...(options.namespace ? { namespace: String(options.namespace) } : {}),
        env,
        image: String(options.image),
        resultsClaim: String(options.resultsClaim),
      });
      if (options.out === '-') process.stdout.write(manifest);
      else {
        await writeFile(String(options.out), manifest);
        process.stderr.write(`wrote ${options.out}\n`);
      }
    });
}
