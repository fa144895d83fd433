// The resource kinds' rules, by kind: a new kind is one file and one line here.
import type { ResourceKind } from '../../../contract/index.ts';
import { cpuRule } from './cpu.ts';
import { queueRule } from './queue.ts';
import type { ResourceKindRule } from './resource-kind-rule.ts';
import { slotsRule } from './slots.ts';

export type { ResourceJudgement, ResourceKindRule } from './resource-kind-rule.ts';

/** Every resource kind's rule. */
export const RESOURCE_KIND_RULES: Readonly<Record<ResourceKind, ResourceKindRule>> = {
  slots: slotsRule,
  queue: queueRule,
  cpu: cpuRule,
};
