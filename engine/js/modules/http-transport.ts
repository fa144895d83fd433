// Where requests go: each VU's own keep-alive connections, and the timeouts of requests in flight.

import type { IterationContext } from '../context.ts';
import { nowMs, type TestRuntime } from '../runtime.ts';
import { ConnectionPools, type PoolSettings } from './connection-pool.ts';
import { RequestTimeouts } from './request-timeouts.ts';

/**
 * Where requests go: the connections of the VU that sends them, and the timeouts of
 * requests in flight. As in k6, where every VU has its own http.Transport, a VU keeps and
 * reuses its own connections, so a server sees as many as k6 would open (about one per VU
 * in use), which matters behind a load balancer that spreads connections. Code outside any
 * VU (none in k6) shares one set. A class, not an object literal per module: its methods
 * are one function for every run, so code optimized in the warm-up rehearsal calls the
 * same function in the test.
 */
export class Transport {
  readonly timeouts = new RequestTimeouts(nowMs);
  readonly #runtime: TestRuntime;
  readonly #settings: PoolSettings;
  readonly #shared: ConnectionPools;
  readonly #all: Set<ConnectionPools>;

  constructor(runtime: TestRuntime, settings: PoolSettings) {
    this.#runtime = runtime;
    this.#settings = settings;
    this.#shared = new ConnectionPools(settings);
    this.#all = new Set([this.#shared]);
  }

  agentFor(context: IterationContext | undefined): ConnectionPools {
    if (!context) return this.#shared;
    const vu = context.vu;
    let pools = vu.connections;
    if (pools && this.#runtime.noVUConnectionReuse && vu.connectionsIteration !== vu.iterationInInstance) {
      // k6 closes a VU's idle connections when its iteration ends: a new iteration dials anew.
      this.#all.delete(pools);
      void pools.close();
      pools = undefined;
    }
    if (!pools) {
      pools = new ConnectionPools(this.#settings);
      vu.connections = pools;
      vu.connectionsIteration = vu.iterationInInstance;
      this.#all.add(pools);
    }
    return pools;
  }

  /** Closes every connection this transport opened. */
  close(): Promise<void> {
    return Promise.all([...this.#all].map((pools) => pools.close())).then(() => undefined);
  }
}
