// `k6/crypto`: hashes, HMAC and random bytes on Node's crypto.
import { createHash, createHmac, getHashes, randomBytes as nodeRandomBytes } from 'node:crypto';
import { bytesOf, toArrayBuffer } from './bytes.ts';

/** k6's algorithm names → Node's. */
const ALGORITHMS: Record<string, string> = {
  md4: 'md4',
  md5: 'md5',
  sha1: 'sha1',
  sha256: 'sha256',
  sha384: 'sha384',
  sha512: 'sha512',
  sha512_224: 'sha512-224',
  sha512_256: 'sha512-256',
  ripemd160: 'ripemd160',
};

function algorithm(name: unknown): string {
  const node = ALGORITHMS[String(name)];
  if (!node)
    throw new Error(`unknown hash algorithm "${String(name)}": use ${Object.keys(ALGORITHMS).join(', ')}`);
  if (!getHashes().includes(node)) {
    throw new Error(
      `hash algorithm "${String(name)}" is not available in this Node build (OpenSSL 3 drops md4)`,
    );
  }
  return node;
}

/** A digest in k6's output encodings: hex, base64, base64url, base64rawurl, or binary (ArrayBuffer). */
function encodeDigest(digest: Buffer, encoding: unknown): string | ArrayBuffer {
  switch (encoding) {
    case 'hex':
      return digest.toString('hex');
    case 'base64':
      return digest.toString('base64');
    case 'base64url':
      return `${digest.toString('base64url')}${'='.repeat((4 - (digest.toString('base64url').length % 4)) % 4)}`;
    case 'base64rawurl':
      return digest.toString('base64url');
    case 'binary':
      return toArrayBuffer(digest);
    default:
      throw new Error(
        `unknown output encoding "${String(encoding)}": use hex, base64, base64url, base64rawurl or binary`,
      );
  }
}

/** What createHash/createHMAC return: update() as often as needed, then digest(). */
class Hasher {
  readonly #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>) {
    this.#hash = hash;
  }
  update(input: unknown): void {
    this.#hash.update(bytesOf(input));
  }
  digest(encoding: unknown): string | ArrayBuffer {
    return encodeDigest(this.#hash.digest(), encoding);
  }
}

/** `k6/crypto`: hashes, HMAC and random bytes. */
export function createCryptoModule() {
  const hash = (name: string) => (input: unknown, encoding: unknown) =>
    encodeDigest(createHash(algorithm(name)).update(bytesOf(input)).digest(), encoding);
  const exports = {
    md4: hash('md4'),
    md5: hash('md5'),
    sha1: hash('sha1'),
    sha256: hash('sha256'),
    sha384: hash('sha384'),
    sha512: hash('sha512'),
    sha512_224: hash('sha512_224'),
    sha512_256: hash('sha512_256'),
    ripemd160: hash('ripemd160'),
    createHash: (name: unknown) => new Hasher(createHash(algorithm(name))),
    createHMAC: (name: unknown, secret: unknown) => new Hasher(createHmac(algorithm(name), bytesOf(secret))),
    hmac: (name: unknown, secret: unknown, data: unknown, encoding: unknown) =>
      encodeDigest(createHmac(algorithm(name), bytesOf(secret)).update(bytesOf(data)).digest(), encoding),
    randomBytes: (size: unknown) => {
      const n = Number(size);
      if (!Number.isInteger(n) || n < 1)
        throw new Error(`randomBytes needs a whole number of bytes >= 1, got ${String(size)}`);
      return toArrayBuffer(nodeRandomBytes(n));
    },
  };
  return { default: exports, ...exports };
}
