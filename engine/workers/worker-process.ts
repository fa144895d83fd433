// One engine worker as the coordinator holds it: the child process, its IPC channel, and
// how far it got.
import { type ChildProcess, fork } from 'node:child_process';
import type { FromWorker, ToWorker, WorkerResults } from './worker-protocol.ts';

/** How to start a worker process: the module `fork` runs, its arguments and Node flags. */
export interface WorkerCommand {
  modulePath: string;
  args: string[];
  execArgv: string[];
}

/** How far a worker got, in order. */
export type WorkerStage = 'starting' | 'loaded' | 'ready' | 'done';

/**
 * A worker process: forked with an IPC channel (V8's serialization, so a trend's histogram
 * pages cross as typed arrays), standard output and error shared with the coordinator's
 * (the summary goes to the user's stdout), standard input closed. Messages and its exit go
 * to the callbacks; `send` to a worker that is gone does nothing.
 */
export class WorkerProcess {
  readonly index: number;
  readonly segment: string;
  readonly #child: ChildProcess;
  stage: WorkerStage = 'starting';
  /** Set by its `result` message, just before it exits. */
  result: { exitCode: number; reason: string } | undefined;
  /** Set by its `done` message. */
  results: WorkerResults | undefined;
  /** How its process ended, once it has. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(
    index: number,
    segment: string,
    command: WorkerCommand,
    on: { message(worker: WorkerProcess, message: FromWorker): void; exit(worker: WorkerProcess): void },
  ) {
    this.index = index;
    this.segment = segment;
    this.#child = fork(command.modulePath, command.args, {
      execArgv: command.execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.#child.on('message', (message) => on.message(this, message as FromWorker));
    // A channel that breaks as the worker dies is not the coordinator's error: `exit` says it.
    this.#child.on('error', () => undefined);
    this.#child.once('exit', (code, signal) => {
      this.exit = { code, signal };
      on.exit(this);
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get exited(): boolean {
    return this.exit !== undefined;
  }

  /** Ends the process at once (the coordinator is exiting without having ended it). */
  kill(): void {
    if (!this.exited) this.#child.kill('SIGKILL');
  }

  send(message: ToWorker): void {
    if (this.exited || !this.#child.connected) return;
    this.#child.send(message, (error) => {
      // The worker went away between the check and the write: its exit tells the rest.
      void error;
    });
  }
}
