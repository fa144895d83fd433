// `k6/encoding`: base64 in k6's four variants.
import { bytesOf, toArrayBuffer } from './bytes.ts';

/** k6's base64 variants: std and url, padded or raw. */
type Base64Encoding = 'std' | 'rawstd' | 'url' | 'rawurl';

function checkEncoding(encoding: unknown): Base64Encoding {
  const value = encoding === undefined || encoding === '' ? 'std' : String(encoding);
  if (value === 'std' || value === 'rawstd' || value === 'url' || value === 'rawurl') return value;
  throw new Error(`unknown base64 encoding "${value}": use std, rawstd, url or rawurl`);
}

/** `k6/encoding`: b64encode and b64decode. */
export function createEncodingModule() {
  const exports = {
    b64encode(input: unknown, encoding?: unknown): string {
      const kind = checkEncoding(encoding);
      const bytes = bytesOf(input);
      const text = bytes.toString(kind === 'url' || kind === 'rawurl' ? 'base64url' : 'base64');
      if (kind === 'rawstd') return text.replace(/=+$/, '');
      if (kind === 'url') return text + '='.repeat((4 - (text.length % 4)) % 4);
      return text;
    },
    /** Returns an ArrayBuffer, or a string when `format` is "s". */
    b64decode(input: unknown, encoding?: unknown, format?: unknown): ArrayBuffer | string {
      const kind = checkEncoding(encoding);
      const text = String(input);
      const valid = kind === 'std' || kind === 'rawstd' ? /^[A-Za-z0-9+/]*={0,2}$/ : /^[A-Za-z0-9_-]*={0,2}$/;
      if (!valid.test(text)) throw new Error(`"${text.slice(0, 40)}" is not ${kind} base64`);
      const bytes = Buffer.from(text, kind === 'url' || kind === 'rawurl' ? 'base64url' : 'base64');
      return format === 's' ? bytes.toString('utf8') : toArrayBuffer(bytes);
    },
  };
  return { default: exports, ...exports };
}
