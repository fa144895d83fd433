// CIDR ranges, as k6's blacklistIPs takes them.
import { isIP } from 'node:net';

/** `10.0.0.0/8` → its parts, or undefined when it is not a CIDR range. */
export function parseCidr(
  range: string,
): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const slash = range.indexOf('/');
  if (slash < 0) return undefined;
  const address = range.slice(0, slash);
  const bits = range.slice(slash + 1);
  const version = isIP(address);
  if (version === 0 || !/^\d{1,3}$/.test(bits)) return undefined;
  const prefix = Number(bits);
  if (prefix > (version === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}
