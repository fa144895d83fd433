// probe.json: the breakpoint probe of `plateau run --find`, step by step, and why it stopped;
// run.json's `find`: how the study's steps were chosen from it.

/** A sign that a probe step had reached the knee. */
export type ProbeSignKind =
  /** Served fell below the plateau rule's share of what was sent. */
  | 'served'
  /** The step's p95 reached the latency objective. */
  | 'p95'
  /** Failures (sheds, errors, timeouts) reached the failure budget. */
  | 'failures'
  /** A resource of the service was full: its pool (checked out and callers waiting), or its own saturation count. */
  | 'saturated'
  /** The generator dropped starts while it kept up itself: every VU waited on a slow service. */
  | 'dropped';

export interface ProbeSign {
  kind: ProbeSignKind;
  /** What was seen, in words: `served 72/s of 128/s sent`. */
  words: string;
}

/** One step of the probe as the harness saw it live (the seconds its ramp may reach left out). */
export interface ProbeStep {
  /** `p016`. */
  step: string;
  offeredPerSec: number;
  /** Seconds served was counted over: the service's settled seconds, else the generator's readings. */
  seconds: number;
  /** Starts the generator made, /s: offered less what it dropped. */
  sentPerSec: number | null;
  /** Successes completed per second: the service's count when it answers `/steps/live`, else the client's. */
  servedPerSec: number | null;
  servedSource: 'server' | 'client' | null;
  /** p95 of the step's requests, ms: the client's (the generator's per-step trend), else the service's handler time. */
  p95Ms: number | null;
  p95Source: 'client' | 'server' | null;
  /** Share of the step's requests that failed (0..1), from the generator. */
  failureRate: number | null;
  /** Refusals (503) the service made, /s. */
  shedPerSec: number | null;
  droppedPerSec: number | null;
  /** The reference service's pool: mean share checked out (%) and callers waiting. */
  pool: { checkedOutPct: number; waitingMean: number } | null;
  /** Requests that found every limit of the service full during the step (its own count). */
  saturated: number | null;
  /** The generator's CPU, % of the cores it can use (its busiest second of the step). */
  generatorCpuPct: number | null;
  signs: ProbeSign[];
}

/**
 * Why the probe stopped: `knee` it saw the knee; `generator` the generator reached its own
 * limit first; `failing` the service failed from the first step; `budget` its share of the
 * budget ran out before any sign; `end` its last rate ran without a sign; `interrupted` a
 * signal; `failed` a part of the study died.
 */
export type ProbeStopReason = 'knee' | 'generator' | 'failing' | 'budget' | 'end' | 'interrupted' | 'failed';

/** `probe.json` in a run directory of `plateau run --find`. */
export interface ProbeReport {
  kind: 'plateau.probe';
  schemaVersion: 1;
  /** The probe's plan: rates doubling from a low one, each held `holdSeconds`. */
  plan: { ratesPerSec: number[]; holdSeconds: number; rampSeconds: number };
  steps: ProbeStep[];
  stop: { reason: ProbeStopReason; atStep: string | null; words: string };
  /** The first step that showed a sign of the knee; null when none did. */
  firstSign: { step: string; offeredPerSec: number } | null;
  /** What the service served once served fell below sent (the plateau as the probe saw it), /s; null when it never did. */
  plateauPerSec: number | null;
  /** Where the steps are placed around: the plateau, else the first sign's rate; null when neither was seen. */
  kneePerSec: number | null;
}

/** run.json's `find`: how the study's steps were chosen (absent for steps given by hand alone). */
export interface StepFinding {
  /** `probe`: the probe placed the steps (`--find`); `given`: the steps were given and the probe chose which to repeat. */
  placedBy: 'probe' | 'given';
  /** The time budget of probe and study, s (`--budget`); null when none applied. */
  budgetSeconds: number | null;
  /** The probe as it ended (probe.json has every step). */
  probe: {
    ratesPerSec: number[];
    holdSeconds: number;
    stop: ProbeStopReason;
    atStep: string | null;
    kneePerSec: number | null;
  };
  /** The first-pass steps that run again later in the study (`r070` for `r070b`). */
  repeated: string[];
  /** The record's `steps:` line. */
  how: string;
}
