// What the verdict is decided from.
import type {
  DatabaseInfo,
  ResourceSeries,
  RunEnding,
  SaturationRow,
  ServiceSettings,
  TimelinePoint,
  VerdictCriteria,
} from '../../contract/index.ts';

export interface VerdictInputs {
  rows: SaturationRow[];
  settings: ServiceSettings | null;
  timeline: TimelinePoint[];
  objectives: { p95Ms: number; failRate: number };
  database: DatabaseInfo | null;
  recoveryRatePerSec: number | null;
  /** Whether this run's arrivals were jittered. */
  jittered?: boolean;
  /** Client p95 per epoch second after the ramp; recovery also waits for it to meet the objective. */
  clientP95MsBySecond?: Map<number, number>;
  /** The thresholds to judge by (default DEFAULT_CRITERIA). */
  criteria?: VerdictCriteria;
  /** The most VUs the generator had initialised (`vus_max`), when its output says. */
  vusMax?: number | null;
  /** The client's requests in flight at an epoch second of the client's clock. */
  clientInFlightAt?: (atS: number) => number;
  /** Epoch s (client clock) where the ramp ended and where the load stopped, when known. */
  clientRampEndS?: number | null;
  clientLoadEndS?: number | null;
  /** Server clock minus client clock, s (0 when unknown): shifts client seconds onto the timeline. */
  clockOffsetS?: number;
  /**
   * The resources the service's meters showed, per second (resources.json): without a
   * server timeline, the first limit's own series measures recovery and backlog.
   */
  resources?: ResourceSeries[];
  /**
   * How the run ended when it did not complete: rows it cut short (`cutShort`) are left out,
   * and what the steps it never ran would have shown is said to be not known.
   */
  ended?: RunEnding | null;
}
