// The running parts of a study (database, service, meters, load, …) and the one way they stop.
import type { EndingReason } from '../../contract/index.ts';

/** Why a study ends, as the part that ended it (or the signal, or an error) says. */
export interface PartEnding {
  reason: EndingReason;
  /** What happened, in words: `the statement service died (killed by SIGKILL)`. */
  detail: string;
  /** What the user can read to see why (a log's last lines). */
  hint?: string;
}

/** One thing a study started and must stop. */
export interface StudyPart {
  /** For messages: `load engine`, `statement service`. */
  readonly name: string;
  /**
   * Resolves when the part ends by itself: the load when its plan is done (`completed`) or
   * it died, a service or a database that died, a disk that filled. Never for a part that
   * only ends when stopped (the meters). What resolves after the study began to stop is
   * not an ending.
   */
  readonly ended?: Promise<PartEnding>;
  /** Stops it and saves what it gathered; called once, in reverse order of starting. */
  stop(): Promise<void>;
}

/**
 * The parts of one study, in the order they started. The first ending any of them reports
 * ends the study; `stopAll` stops every part, the last started first (the load before the
 * meters, the service before its database), each once, whatever failed before it.
 */
export class StudyParts {
  readonly #parts: StudyPart[] = [];
  readonly #endings: PartEnding[] = [];
  #stopping = false;
  #onEnding: (ending: PartEnding) => void = () => undefined;
  readonly #first: Promise<PartEnding>;

  constructor() {
    this.#first = new Promise((resolve) => {
      this.#onEnding = resolve;
    });
  }

  /** Adds a started part; from now on its ending ends the study. */
  add(part: StudyPart): void {
    this.#parts.push(part);
    void part.ended?.then((ending) => {
      if (this.#stopping) return;
      this.#endings.push(ending);
      this.#onEnding(ending);
    });
  }

  /** The first ending a part reports, or the abort of `signal` (`interrupted`, with its reason). */
  first(signal?: AbortSignal): Promise<PartEnding> {
    if (!signal) return this.#first;
    const aborted = new Promise<PartEnding>((resolve) => {
      const onAbort = () => resolve(interruptedBy(signal));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([this.#first, aborted]);
  }

  /** Every ending parts reported before the study began to stop, in order. */
  get endings(): readonly PartEnding[] {
    return this.#endings;
  }

  /**
   * Stops every part, the last added first. A part that fails to stop does not keep the
   * others running: its error is returned, in words, with the part's name.
   */
  async stopAll(): Promise<string[]> {
    this.#stopping = true;
    const problems: string[] = [];
    for (const part of [...this.#parts].reverse()) {
      try {
        await part.stop();
      } catch (error) {
        problems.push(`stopping the ${part.name} failed: ${(error as Error)?.message ?? String(error)}`);
      }
    }
    this.#parts.length = 0;
    return problems;
  }
}

/** The ending of a study its signal aborted: `stopped by SIGINT` when the abort's reason names a signal. */
export function interruptedBy(signal: AbortSignal | undefined): PartEnding {
  const reason: unknown = signal?.reason;
  return {
    reason: 'interrupted',
    detail: typeof reason === 'string' && reason.startsWith('SIG') ? `stopped by ${reason}` : 'interrupted',
  };
}

/** Which ending explains a study when several happened: the first listed (a dead database kills its service). */
const PRECEDENCE: readonly EndingReason[] = [
  'interrupted',
  'disk-full',
  'database-died',
  'service-died',
  'generator-died',
  'failed',
  'completed',
];

/**
 * How the study ended, from everything that happened before it stopped: the signal that
 * interrupted it, a disk found full, what its parts reported, an error that stopped its start.
 * A signal is what the user asked for; a full disk and a dead database explain the rest (a
 * service dies of its database, an engine of the disk); a completed load only when nothing
 * else happened.
 */
export function decideEnding(happened: readonly (PartEnding | undefined)[]): PartEnding {
  const known = happened.filter((e): e is PartEnding => e !== undefined);
  for (const reason of PRECEDENCE) {
    const ending = known.find((e) => e.reason === reason);
    if (ending) return ending;
  }
  return { reason: 'failed', detail: 'the study ended without saying why' };
}
