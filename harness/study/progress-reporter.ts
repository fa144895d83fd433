// Decides what of the progress reaches stderr: a live line on a terminal, plain lines in a log.
import { plainLine, type StudyProgress, ttyLine } from './progress-line.ts';

/** How often a log without a terminal gets a line during a step, ms. */
export const PLAIN_EVERY_MS = 10_000;

const CLEAR = '\r\x1b[K';

export interface ProgressReporterOptions {
  write: (text: string) => void;
  /** A terminal: the live line is rewritten in place each second. */
  tty: boolean;
  /** --quiet: nothing at all. */
  quiet: boolean;
  /** The clock the plain cadence runs on, ms; Date.now by default. */
  now?: () => number;
  /** The terminal's width: a longer live line is cut, since a wrapped one cannot be rewritten. */
  columns?: number;
}

/**
 * Writes the progress of run, confirm and check. On a terminal, each load snapshot rewrites
 * the live line, and a step's last line stays on screen when the next step starts. Without
 * one (CI logs), a load snapshot is printed when 10 s have passed since the last line, and a
 * step's last snapshot when the step changes or the load ends, so each step leaves its
 * settled figures in the log; other phases are printed once each. Notices always get a line
 * of their own. `--quiet` silences everything.
 */
export class ProgressReporter {
  readonly #write: (text: string) => void;
  readonly #tty: boolean;
  readonly #quiet: boolean;
  readonly #now: () => number;
  readonly #columns: number | undefined;
  /** The newest load snapshot, until its step is closed. */
  #last: StudyProgress | undefined;
  /** Whether #last is already in the log (plain lines only). */
  #lastPrinted = false;
  /** When the last plain load line was written (or the load started). */
  #plainSinceMs: number | undefined;
  #lastPhase: string | undefined;
  /** Whether a live line is on screen now. */
  #live = false;

  constructor(options: ProgressReporterOptions) {
    this.#write = options.write;
    this.#tty = options.tty;
    this.#quiet = options.quiet;
    this.#now = options.now ?? Date.now;
    this.#columns = options.columns;
  }

  report(p: StudyProgress): void {
    if (this.#quiet) return;
    if (p.notice) this.#line(p.notice);
    if (p.phase !== 'load') {
      this.#closeStep();
      if (this.#tty) this.#liveLine(ttyLine(p));
      else if (p.phase !== this.#lastPhase) this.#write(`${plainLine(p)}\n`);
      this.#lastPhase = p.phase;
      return;
    }
    this.#lastPhase = p.phase;
    if (this.#last && this.#last.step !== p.step) this.#closeStep();
    this.#last = p;
    this.#lastPrinted = false;
    if (this.#tty) {
      this.#liveLine(ttyLine(p));
      return;
    }
    const now = this.#now();
    this.#plainSinceMs ??= now;
    if (now - this.#plainSinceMs >= PLAIN_EVERY_MS) {
      this.#write(`${plainLine(p)}\n`);
      this.#plainSinceMs = now;
      this.#lastPrinted = true;
    }
  }

  /** Leaves the last step's line and clears the live line; call once the work is done. */
  finish(): void {
    if (this.#quiet) return;
    this.#closeStep();
    if (this.#live) this.#write(CLEAR);
    this.#live = false;
  }

  /** The step of #last has ended: its last snapshot stays in the log or on screen. */
  #closeStep(): void {
    const last = this.#last;
    this.#last = undefined;
    if (!last) return;
    if (this.#tty) {
      this.#write(`${CLEAR}${this.#fit(ttyLine(last))}\n`);
      this.#live = false;
    } else if (!this.#lastPrinted) {
      this.#write(`${plainLine(last)}\n`);
    }
    this.#plainSinceMs = this.#now();
  }

  #liveLine(text: string): void {
    this.#write(`${CLEAR}${this.#fit(text)}`);
    this.#live = true;
  }

  #line(text: string): void {
    this.#write(`${this.#live ? CLEAR : ''}${text}\n`);
    this.#live = false;
  }

  #fit(text: string): string {
    const columns = this.#columns;
    return columns && text.length >= columns ? `${text.slice(0, Math.max(0, columns - 2))}…` : text;
  }
}

/** The reporter of a command: stderr (stdout stays clean for --json), live when it is a terminal. */
export function stderrReporter(quiet: boolean): ProgressReporter {
  const stderr = process.stderr;
  return new ProgressReporter({
    write: (text) => stderr.write(text),
    tty: stderr.isTTY === true,
    quiet,
    ...(stderr.isTTY && stderr.columns ? { columns: stderr.columns } : {}),
  });
}
