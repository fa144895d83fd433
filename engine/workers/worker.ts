// An engine worker process: runs its share of the test the coordinator sent, linked to it.
import type { TestCoordination } from '../coordination.ts';
import type { Logger } from '../js/logger.ts';
import { runTest } from '../runner.ts';
import { type IpcChannel, type ReceivedInit, WorkerLink } from './worker-link.ts';

/** A worker under way. */
export interface StartedWorker {
  /** Stops its run (a signal this process got): it ends as an interrupted run, its data kept. */
  stop(message: string): void;
  /** Resolves with the exit code once the coordinator has its result. */
  ended: Promise<number>;
}

/**
 * Runs worker `init.index`'s share of the test and tells the coordinator its result.
 * Workers after the first say nothing but errors until the clock starts: what they would
 * log while loading (option warnings, the rehearsal) is worker 0's word for word.
 */
export function startWorker(received: ReceivedInit, logger: Logger, channel: IpcChannel): StartedWorker {
  const { init } = received;
  const link = new WorkerLink(channel, received);
  let clockStarted = init.index === 0;
  const quiet: Logger = {
    log(level, message, fields) {
      if (level === 'error' || clockStarted) logger.log(level, message, fields);
    },
  };
  const coordination: TestCoordination = {
    loaded: (runtime, thresholds) => link.loaded(runtime, thresholds),
    ready: async () => {
      await link.ready();
      clockStarted = true;
    },
    started: (run) => link.started(run),
    setupData: (run) => link.setupData(run),
    scenariosEnded: () => link.scenariosEnded(),
  };
  const ended = (async () => {
    const result = await runTest({ ...init.config, logger: quiet, coordination });
    await link.result(result.exitCode, result.reason);
    return result.exitCode;
  })();
  return { stop: (message) => link.stop({ kind: 'signal', message }), ended };
}
