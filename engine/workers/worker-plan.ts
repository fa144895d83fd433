// `--workers N|auto`: how many engine processes, each one's execution segment, and where
// each writes its share of the outputs. Pure: the machine's cores are given.
import { basename, dirname, join } from 'node:path';
import type { ConfigProblem } from '../../contract/index.ts';
import { formatRational, rational } from '../schedule/rational.ts';

/**
 * Cores `--workers auto` leaves free on a machine of `plateau engine run`: one, for a target
 * on the same machine (the coordinator itself needs little). Against a remote target from a
 * machine of its own, give the count instead.
 */
export const ENGINE_RUN_RESERVED_CORES = 1;

/**
 * `auto`: one worker per core this process may use (os.availableParallelism, which follows
 * CPU affinity), less the cores a target on the same machine needs; at least one.
 */
export function autoWorkers(cores: number, reservedCores: number): number {
  return Math.max(1, cores - reservedCores);
}

/** What `--workers` is checked against. */
export interface WorkersContext {
  /** os.availableParallelism(). */
  cores: number;
  /** Cores left free by `auto` (ENGINE_RUN_RESERVED_CORES, or what a study's local parts need). */
  reservedCores: number;
  /** --execution-segment or --execution-segment-sequence was given (flag or K6_ variable). */
  segmented: boolean;
  /** An --out writes to stdout (`-`). */
  outputToStdout: boolean;
  /** Where the value came from, for the messages: `--workers`. */
  setting?: string;
}

/**
 * The worker count `--workers` asks for, or undefined (with a problem) when it cannot run:
 * not a whole number or `auto`, 0, more than the cores (refused, not warned: workers that
 * share a core delay each other's starts, so N workers on fewer cores are less accurate than
 * fewer workers, the opposite of what the flag is for), given with an execution segment (the
 * workers are the segments), or with an output to stdout (each worker writes its own part).
 */
export function parseWorkers(
  text: string,
  context: WorkersContext,
  problems: ConfigProblem[],
): number | undefined {
  const setting = context.setting ?? '--workers';
  const before = problems.length;
  const cores = `${context.cores} core${context.cores === 1 ? '' : 's'}`;
  let count: number | undefined;
  if (text === 'auto') count = autoWorkers(context.cores, context.reservedCores);
  else if (/^\d+$/.test(text)) count = Number(text);
  else {
    problems.push({
      setting,
      message: `"${text}" is not a number of workers`,
      hint: 'give a whole number of engine processes, e.g. --workers 4, or --workers auto (one per core, less one for a target on this machine)',
    });
  }
  if (count === 0) {
    problems.push({
      setting,
      message: '0 workers would run no engine at all',
      hint: `give 1 to ${context.cores}, or auto (here ${autoWorkers(context.cores, context.reservedCores)}); leave --workers out to run in one process`,
    });
  } else if (count !== undefined && count > context.cores) {
    problems.push({
      setting,
      message: `${count} workers are more than the ${cores} this process may use`,
      hint: `give at most ${context.cores}, or auto: workers sharing a core delay each other's starts, the inaccuracy workers exist to avoid`,
    });
  }
  if (context.segmented) {
    problems.push({
      setting,
      message: 'cannot be given with --execution-segment: the workers are the segments of the test',
      hint: 'split a test over this machine’s cores with --workers alone, or over machines with --execution-segment alone, one engine per machine',
    });
  }
  if (context.outputToStdout) {
    problems.push({
      setting,
      message: 'cannot write an output to stdout (-)',
      hint: 'give --out a file: each worker writes its share and they are joined into that one file at the end',
    });
  }
  return problems.length > before ? undefined : count;
}

/** Worker `index`'s share of a test run by `count` workers: equal segments, k6's striping. */
export interface WorkerSegment {
  /** `--execution-segment`: `1/4:1/2`. */
  segment: string;
  /** `--execution-segment-sequence`: `0,1/4,1/2,3/4,1`. */
  sequence: string;
}

/** Equal segments in order: worker i runs i/N to (i+1)/N of every scenario. */
export function workerSegments(count: number): WorkerSegment[] {
  const point = (i: number) => formatRational(rational(i, count));
  const sequence = Array.from({ length: count + 1 }, (_, i) => point(i)).join(',');
  return Array.from({ length: count }, (_, i) => ({ segment: `${point(i)}:${point(i + 1)}`, sequence }));
}

/**
 * Where worker `index` writes its share of an output to `path`: worker 0 the file itself,
 * any other a part beside it with the same endings (`k6.csv.gz` → `k6.part2.csv.gz`, so it
 * is gzipped alike), joined onto the file when the test ends (output-parts.ts).
 */
export function partPath(path: string, index: number): string {
  if (index === 0) return path;
  const name = basename(path);
  const dot = name.indexOf('.', 1);
  const [stem, endings] = dot < 0 ? [name, ''] : [name.slice(0, dot), name.slice(dot)];
  return join(dirname(path), `${stem}.part${index}${endings}`);
}
