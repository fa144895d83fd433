// What a rule for one kind of resource answers: was it full at a step, and what does it hold per request.
import type { ResourceKind, ResourceStepFigures, VerdictCriteria } from '../../../contract/index.ts';

/** A resource judged at one step against the first rate step. */
export interface ResourceJudgement {
  figures: ResourceStepFigures;
  saturated: boolean;
  /** Its figures in words, with the first step's beside them. */
  text: string;
}

/** The rule of one resource kind: one file each, found through the registry in `index.ts`. */
export interface ResourceKindRule {
  kind: ResourceKind;
  /** Whether the resource was full at `now` (a step's figures), against `base` (the first rate step's). */
  judge(
    now: ResourceStepFigures,
    base: ResourceStepFigures | undefined,
    baseStep: string,
    criteria: VerdictCriteria,
  ): ResourceJudgement;
  /**
   * What one request held of the resource at the first rate step, for Little's Law's
   * ceiling (capacity ÷ hold): seconds of a slot, or CPU-seconds; null when the figures
   * do not give it (a queue holds nothing: its requests wait).
   */
  holdPerRequest(base: ResourceStepFigures, servedPerSec: number): number | null;
}
