// Feeds a node-postgres Pool's own events into a StepRecorder.
import type pg from 'pg';
import type { StepRecorder } from './step-recorder.ts';
import { currentTrace, runWithTrace } from './trace-context.ts';

const QUERY_WRAPPED = Symbol('plateau.queryWrapped');

type Callback = (...args: unknown[]) => unknown;

/** What the pool instrumentation tells its owner besides the recorder. */
export interface PoolHooks {
  /** Called before every connect() with the pool state at that moment. */
  beforeConnect?: (pool: pg.Pool) => void;
}

/** Live figures of an instrumented pool. */
export interface PoolProbe {
  /** Connections checked out now (acquire events minus release events). */
  readonly checkedOut: number;
  /** Removes the listeners and restores `pool.connect`. */
  detach(): void;
}

/**
 * Instruments `pool` so that the recorder sees every change of connections checked out
 * (from the pool's `acquire` and `release` events) and of requests waiting (read from
 * `pool.waitingCount` at each event and around each `connect()`), and so that the trace
 * of the calling request gets its wait-for-connection time and each query's time.
 *
 * It wraps `pool.connect` (which `pool.query` also uses) and, once per client, the
 * client's `query`. Works with promise and callback styles.
 */
export function instrumentPool(pool: pg.Pool, recorder: StepRecorder, hooks: PoolHooks = {}): PoolProbe {
  let checkedOut = 0;
  const update = () => recorder.poolState(checkedOut, pool.waitingCount);

  const onAcquire = (client: pg.PoolClient) => {
    checkedOut++;
    wrapQuery(client, recorder);
    update();
  };
  const onRelease = () => {
    checkedOut--;
    update();
  };
  pool.on('acquire', onAcquire);
  pool.on('release', onRelease);

  const originalConnect = pool.connect;
  const connect = function (this: pg.Pool, callback?: Callback): unknown {
    hooks.beforeConnect?.(pool);
    const trace = currentTrace();
    const startMs = recorder.now();
    // With an idle client available, pg-pool queues the request and serves it on the next
    // tick: that is no wait, so the state is read at the 'acquire' event instead.
    const queued = pool.idleCount === 0;
    const settle = () => {
      trace?.recordWaitMs(recorder.now() - startMs);
      update();
    };
    if (typeof callback === 'function') {
      // Callbacks queued in the pool run in the releasing request's context: restore ours.
      originalConnect.call(pool, (...args: unknown[]) => {
        settle();
        return trace ? runWithTrace(trace, () => callback(...args)) : callback(...args);
      });
      if (queued) update();
      return undefined;
    }
    const promise = (originalConnect as () => Promise<pg.PoolClient>).call(pool);
    if (queued) update();
    return promise.then(
      (client) => {
        settle();
        return client;
      },
      (error: unknown) => {
        settle();
        throw error;
      },
    );
  };
  pool.connect = connect as typeof pool.connect;

  return {
    get checkedOut() {
      return checkedOut;
    },
    detach() {
      pool.off('acquire', onAcquire);
      pool.off('release', onRelease);
      pool.connect = originalConnect;
    },
  };
}

/** Times every query a client runs and records it on the trace current at the call. */
function wrapQuery(client: pg.PoolClient, recorder: StepRecorder): void {
  const marked = client as pg.PoolClient & { [QUERY_WRAPPED]?: true };
  if (marked[QUERY_WRAPPED]) return;
  marked[QUERY_WRAPPED] = true;
  const original = client.query as unknown as (...args: unknown[]) => unknown;
  const timed = function (this: unknown, ...args: unknown[]): unknown {
    const trace = currentTrace();
    if (!trace) return original.apply(this, args);
    const startMs = recorder.now();
    const done = () => trace.recordQueryMs(recorder.now() - startMs);
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (...cbArgs: unknown[]) => {
        done();
        return (callback as Callback)(...cbArgs);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args);
    if (result instanceof Promise) result.then(done, done);
    return result;
  };
  client.query = timed as unknown as typeof client.query;
}
