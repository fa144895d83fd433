// `plateau init`: a starter study for your own service, like `k6 new`: a TypeScript k6
// script with the step tagging in place, and a plateau.config.json that runs it.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { PlateauError } from '../../contract/index.ts';
import { isLoopbackUrl } from '../study/study-options.ts';

/** The starter script: k6's documented style, tagged through plateau/k6. */
export function starterScript(endpoint: string): string {
  return `// A plateau study of your service, written as k6 scripts are (k6 run takes it too, once
// bundled by plateau). plateau passes the study's settings (steps, holds, VUs, BASE_URL);
// 'plateau/k6' turns them into the k6 options and tags each request with its step, which
// is how plateau joins what the client saw to what the service did.
import http from 'k6/http';
import { check } from 'k6';
import { study, studyOptions, tagged } from 'plateau/k6';

export const options = studyOptions();

// Edit: the request your users make. Keep tagged(…) on every request.
export default function (): void {
  const res = http.get(\`\${study.baseUrl}${endpoint}\`, tagged());
  check(res, { 'status is 2xx': (r) => r.status >= 200 && r.status < 300 });
}
`;
}

/**
 * The starter config: what \`plateau run\` and \`plateau check\` read in this directory. It
 * names no steps: a study of a service nobody has measured starts with a probe that finds
 * where its knee is and places them (\`plateau run --find\`, within its 5-minute budget).
 */
export function starterConfig(target: string, script: string): string {
  return `${JSON.stringify(
    {
      target,
      script,
      p95Ms: 250,
      failRate: 0.01,
      check: { duration: '30s' },
    },
    null,
    2,
  )}\n`;
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .argument('[dir]', 'where to write the files', '.')
    .summary('write a starter study of your own service (a k6 script and plateau.config.json)')
    .description(
      `Writes k6/study.ts, a TypeScript k6 script whose requests carry their step (k6 tag and
X-Load-Step header, through 'plateau/k6'), and plateau.config.json, which plateau run and
plateau check read from this directory. Edit the request in the script and the target in
the config, then run plateau run: with no steps in the config, a probe finds where the
service's knee is and places them (add steps: [...] to place them yourself).`,
    )
    .option('--target <url>', 'your service', 'http://127.0.0.1:8080')
    .option('--endpoint <path>', 'the path the starter script requests', '/')
    .option('--force', 'overwrite files that exist')
    .addHelpText(
      'after',
      '\nExample:\n  plateau init --target http://127.0.0.1:8080 --endpoint /api/orders && plateau run',
    )
    .action(async (dir: string, flags: { target: string; endpoint: string; force?: boolean }) => {
      const problems = [];
      if (!/^https?:\/\/[^/]+/.test(flags.target)) {
        problems.push({
          setting: '--target',
          message: `"${flags.target}" is not an http(s) URL`,
          hint: 'e.g. --target http://127.0.0.1:8080',
        });
      }
      if (!flags.endpoint.startsWith('/')) {
        problems.push({
          setting: '--endpoint',
          message: `"${flags.endpoint}" is not a path`,
          hint: 'start it with /',
        });
      }
      const root = resolve(dir);
      const script = join(root, 'k6', 'study.ts');
      const config = join(root, 'plateau.config.json');
      const existing = [script, config].filter((path) => existsSync(path));
      if (existing.length > 0 && !flags.force) {
        problems.push({
          setting: 'init',
          message: `${existing.map((p) => relative(process.cwd(), p) || p).join(' and ')} exist`,
          hint: 'pass --force to overwrite them, or another directory',
        });
      }
      if (problems.length > 0) throw PlateauError.invalidConfig(problems, 'options');
      await mkdir(join(root, 'k6'), { recursive: true });
      await writeFile(script, starterScript(flags.endpoint));
      await writeFile(config, starterConfig(flags.target, './k6/study.ts'));
      const show = (path: string) => relative(process.cwd(), path) || path;
      process.stdout.write(
        [
          `wrote ${show(script)} and ${show(config)}`,
          '',
          'Next:',
          `  1. edit the request in ${show(script)} (method, path, body, checks); keep tagged(…) on every request`,
          `  2. edit the target in ${show(config)}${isLoopbackUrl(flags.target) ? '' : ' (a non-loopback target also needs "allowRemoteTarget": true)'}; no steps: a probe finds them (add "steps": [...] to place them yourself)`,
          `  3. run the study from ${show(root) === '' ? 'here' : show(root)}: plateau run   (then plateau check --record runs/<id> in CI)`,
          '',
        ].join('\n'),
      );
    });
}
