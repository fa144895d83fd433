// What to watch next, once the first limit is raised.
import type { LimitResource } from '../../contract/index.ts';

export const NEXT_LIMIT: Record<LimitResource, string> = {
  pool: 'PostgreSQL: its CPU, locks and wait events (pg_stat_activity) once the pool is larger; then the service CPU',
  threads:
    'the pool or the CPU behind the threads: with more threads their holders wait on what they call (read its waiting and wait time)',
  queue: 'what drains the queue (its workers, their pool or the CPU): a longer queue only adds waiting',
  cpu: 'the event loop and GC; then the pool once CPU is added (more replicas or less work per request)',
  database: 'PostgreSQL waits (pg_stat_activity wait_event), slow queries and the database host CPU',
  admission:
    "the CPU the gate protects: with its watermark higher the service serves more and waits longer; read the gate's transitions (admission_transitions_total) against the latency you can accept",
  generator: 'rerun with a stronger generator (execution segments on more cores or machines)',
  inconclusive:
    'rerun with more pre-allocated VUs (about rate × latency in flight), then read the first limit',
  unlisted:
    'instrument what is not listed: other pools (HTTP clients, thread pools), the network link, the generator host',
  none: 'raise the steps until served throughput stops following offered load',
};
