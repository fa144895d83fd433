// k6's blockHostnames and blacklistIPs: destinations a test may not send requests to.
import { BlockList } from 'node:net';
import { parseCidr } from '../../config/cidr.ts';

/** Error codes k6 gives a request refused by these rules. */
export const BLOCKED_HOSTNAME_CODE = 'PLATEAU_BLOCKED_HOSTNAME';
export const BLACKLISTED_IP_CODE = 'PLATEAU_BLACKLISTED_IP';

/** A request refused before it was sent, with k6's message and a code `classify` maps. */
export class RefusedDestination extends Error {
  constructor(
    readonly code: typeof BLOCKED_HOSTNAME_CODE | typeof BLACKLISTED_IP_CODE,
    message: string,
  ) {
    super(message);
    this.name = 'RefusedDestination';
  }
}

/**
 * The rules, checked where k6's dialer checks them: a hostname before it is resolved (or
 * mapped by `hosts`), an address once known.
 */
export class DestinationRules {
  readonly #hostnames: readonly string[];
  readonly #ranges: { range: string; list: BlockList; family: 'ipv4' | 'ipv6' }[];

  constructor(hostnames: readonly string[], ranges: readonly string[]) {
    this.#hostnames = hostnames;
    this.#ranges = ranges.flatMap((range) => {
      const cidr = parseCidr(range);
      if (!cidr) return []; // options.ts reports it before anything runs
      const list = new BlockList();
      list.addSubnet(cidr.address, cidr.prefix, cidr.family);
      return [{ range, list, family: cidr.family }];
    });
  }

  get empty(): boolean {
    return this.#hostnames.length === 0 && this.#ranges.length === 0;
  }

  /** The refusal for `hostname` (a name, not an address), or undefined when it may be dialled. */
  checkHostname(hostname: string): RefusedDestination | undefined {
    const name = hostname.toLowerCase();
    for (const pattern of this.#hostnames) {
      const matches = pattern.startsWith('*') ? name.endsWith(pattern.slice(1)) : name === pattern;
      if (matches) {
        return new RefusedDestination(
          BLOCKED_HOSTNAME_CODE,
          `hostname (${hostname}) is in a blocked pattern (${pattern})`,
        );
      }
    }
    return undefined;
  }

  /** The refusal for `address` (IPv4 or IPv6), or undefined when it may be dialled. */
  checkAddress(address: string, family: 'ipv4' | 'ipv6'): RefusedDestination | undefined {
    for (const { range, list, family: rangeFamily } of this.#ranges) {
      if (rangeFamily === family && list.check(address, family)) {
        return new RefusedDestination(
          BLACKLISTED_IP_CODE,
          `IP (${address}) is in a blacklisted range (${range})`,
        );
      }
    }
    return undefined;
  }
}
