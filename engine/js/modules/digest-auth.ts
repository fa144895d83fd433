// HTTP digest authentication (RFC 7616), for k6's `params.auth: 'digest'`: the request goes
// out without credentials, and a 401 whose WWW-Authenticate offers Digest is answered once.
import { createHash, randomBytes } from 'node:crypto';

/** What a Digest challenge says. */
interface Challenge {
  realm: string;
  nonce: string;
  opaque: string | undefined;
  algorithm: string;
  qop: string[];
}

/** The Digest challenge in a WWW-Authenticate value, or undefined when it offers none. */
export function parseDigestChallenge(header: string | undefined): Challenge | undefined {
  if (!header) return undefined;
  const start = header.search(/digest\s/i);
  if (start < 0) return undefined;
  const fields: Record<string, string> = {};
  const rest = header.slice(start + 7);
  for (const m of rest.matchAll(/([a-z]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi)) {
    fields[m[1]!.toLowerCase()] = m[2] ?? m[3] ?? '';
  }
  if (fields.nonce === undefined) return undefined;
  return {
    realm: fields.realm ?? '',
    nonce: fields.nonce,
    opaque: fields.opaque,
    algorithm: fields.algorithm ?? 'MD5',
    qop: (fields.qop ?? '')
      .split(',')
      .map((q) => q.trim())
      .filter((q) => q !== ''),
  };
}

/**
 * The Authorization value answering `challenge` for `method` on `uri` (path and query):
 * MD5 or SHA-256, `-sess` variants, qop `auth` when offered (RFC 2069 style otherwise).
 * Undefined for an algorithm it does not know, so the 401 stands.
 */
export function digestAuthorization(
  challenge: Challenge,
  method: string,
  uri: string,
  username: string,
  password: string,
  cnonce = randomBytes(8).toString('hex'),
): string | undefined {
  const algorithm = challenge.algorithm.toUpperCase();
  const hashName = algorithm.startsWith('SHA-256')
    ? 'sha256'
    : algorithm.startsWith('MD5')
      ? 'md5'
      : undefined;
  if (!hashName || !/^(MD5|SHA-256)(-SESS)?$/.test(algorithm)) return undefined;
  const hash = (text: string) => createHash(hashName).update(text).digest('hex');
  const nc = '00000001';
  let ha1 = hash(`${username}:${challenge.realm}:${password}`);
  if (algorithm.endsWith('-SESS')) ha1 = hash(`${ha1}:${challenge.nonce}:${cnonce}`);
  const ha2 = hash(`${method}:${uri}`);
  const qop = challenge.qop.includes('auth') ? 'auth' : undefined;
  const response = qop
    ? hash(`${ha1}:${challenge.nonce}:${nc}:${cnonce}:${qop}:${ha2}`)
    : hash(`${ha1}:${challenge.nonce}:${ha2}`);
  const parts = [
    `username="${username}"`,
    `realm="${challenge.realm}"`,
    `nonce="${challenge.nonce}"`,
    `uri="${uri}"`,
    `algorithm=${challenge.algorithm}`,
    `response="${response}"`,
  ];
  if (qop) parts.push(`qop=${qop}`, `nc=${nc}`, `cnonce="${cnonce}"`);
  if (challenge.opaque !== undefined) parts.push(`opaque="${challenge.opaque}"`);
  return `Digest ${parts.join(', ')}`;
}
