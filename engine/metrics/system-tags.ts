// k6's system tags: the tags the engine itself puts on samples, and options.systemTags,
// which says which of them samples carry (k6-compat.md §1 and §6).

/** Every system tag k6 knows. */
export const SYSTEM_TAGS = [
  'check',
  'error',
  'error_code',
  'expected_response',
  'group',
  'ip',
  'iter',
  'method',
  'name',
  'ocsp_status',
  'proto',
  'scenario',
  'service',
  'status',
  'subproto',
  'tls_version',
  'url',
  'vu',
] as const;

export type SystemTag = (typeof SYSTEM_TAGS)[number];

/** System tags k6 knows but leaves off unless systemTags names them. */
const OPT_IN_TAGS: ReadonlySet<SystemTag> = new Set(['ip', 'iter', 'ocsp_status', 'vu']);

/** k6's default `systemTags`. */
export const DEFAULT_SYSTEM_TAGS: readonly SystemTag[] = SYSTEM_TAGS.filter((tag) => !OPT_IN_TAGS.has(tag));

/** System tags that are sample metadata when enabled, never tags (not indexable). */
const METADATA_TAGS: ReadonlySet<SystemTag> = new Set(['vu', 'iter']);

/**
 * System tags the engine never fills: `ocsp_status` (Node gives no stapled OCSP answer
 * without asking for one) and `service`/`subproto` (gRPC and WebSocket only, which the
 * engine lacks). Enabled, they are columns left empty, as k6 leaves them on plain HTTP.
 */
export const UNRECORDED_TAGS: ReadonlySet<SystemTag> = new Set(['ocsp_status']);

/** Which system tags samples carry: one flag per tag, read on every sample. */
export type SystemTagFlags = Readonly<Record<SystemTag, boolean>>;

/** The flags for `enabled` (names already checked against SYSTEM_TAGS). */
export function systemTagFlags(enabled: readonly string[]): SystemTagFlags {
  const on = new Set(enabled);
  return Object.fromEntries(SYSTEM_TAGS.map((tag) => [tag, on.has(tag)])) as Record<SystemTag, boolean>;
}

export const DEFAULT_SYSTEM_TAG_FLAGS = systemTagFlags(DEFAULT_SYSTEM_TAGS);

/** The CSV output's tag columns for `enabled`: the indexable ones, sorted, as k6 writes them. */
export function csvTagColumns(enabled: readonly string[]): string[] {
  return [...new Set(enabled)].filter((tag) => !METADATA_TAGS.has(tag as SystemTag)).sort();
}

/** Whether `name` is a system tag. */
export function isSystemTag(name: string): name is SystemTag {
  return (SYSTEM_TAGS as readonly string[]).includes(name);
}
