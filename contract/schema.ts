// Schema versions of every artifact plateau writes to disk or serves as JSON.

/**
 * Version of each on-disk or over-the-wire shape. A reader refuses a file whose
 * `schemaVersion` is newer than the one it knows, and says which plateau to upgrade to.
 */
export const SCHEMA_VERSIONS = {
  'plateau.server-steps': 2,
  'plateau.run': 2,
  'plateau.analysis': 2,
  'plateau.server-live': 1,
  'plateau.generator-cpu': 1,
  'plateau.resources': 1,
  /** probe.json: the breakpoint probe of `plateau run --find` (contract/probe.ts). */
  'plateau.probe': 1,
  /** client-summary.json.gz: a run's client side read once (analysis/client-summary.ts). */
  'plateau.client-summary': 1,
} as const;

/** The `kind` field that names what an artifact is. */
export type ArtifactKind = keyof typeof SCHEMA_VERSIONS;
