// Request and response bodies: k6's encodings, multipart, compression and decompression.
import { randomBytes } from 'node:crypto';
import {
  brotliCompressSync,
  brotliDecompressSync,
  deflateSync,
  gunzipSync,
  gzipSync,
  inflateSync,
} from 'node:zlib';

/** The body compressors k6's params.compression names (deflate is zlib-wrapped, as Go's). */
const COMPRESSORS: Readonly<Record<string, (data: Buffer) => Buffer>> = {
  gzip: (data) => gzipSync(data),
  deflate: (data) => deflateSync(data),
  br: (data) => brotliCompressSync(data),
};

/**
 * k6's params.compression: the body compressed by each algorithm in turn and
 * Content-Encoding set to the list; an Error for an algorithm the engine has not, or when
 * the request already says how its body is encoded.
 */
export function compressBody(
  payload: Buffer | undefined,
  compression: string,
  headers: Record<string, string>,
): Buffer | Error {
  const algorithms = compression.split(',').map((a) => a.trim());
  for (const key in headers) {
    if (key.toLowerCase() === 'content-encoding') {
      return new Error('params.compression: the request sets Content-Encoding itself; set one or the other');
    }
  }
  let data = payload ?? Buffer.alloc(0);
  for (const algorithm of algorithms) {
    const compress = COMPRESSORS[algorithm];
    if (!compress) {
      return new Error(
        `params.compression: ${JSON.stringify(algorithm)} is not an algorithm the engine compresses with (use gzip, deflate or br${algorithm === 'zstd' ? '; Node 20 has no zstd' : ''})`,
      );
    }
    data = compress(data);
  }
  headers['Content-Encoding'] = algorithms.join(', ');
  return data;
}

/** k6's FileData (`http.file()`): a part of a multipart body. */
export class FileData {
  readonly data: unknown;
  readonly filename: string;
  readonly content_type: string;

  constructor(data: unknown, filename?: string, contentType?: string) {
    this.data = data;
    // k6's defaults: a name from the clock, and octet-stream.
    this.filename = filename ? String(filename) : String(process.hrtime.bigint());
    this.content_type = contentType ? String(contentType) : 'application/octet-stream';
  }
}

/** Bytes of a body or file part: a string, an ArrayBuffer or view, or an array of byte values. */
export function bytesOf(data: unknown): Buffer {
  if (typeof data === 'string') return Buffer.from(data);
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (Array.isArray(data)) return Buffer.from(data.map(Number));
  return Buffer.from(String(data));
}

/**
 * k6's multipart/form-data body for an object with a FileData among its values: a file
 * part for each FileData, a field for each other value, in the object's order.
 */
export function multipartBody(fields: Record<string, unknown>, headers: Record<string, string>): Buffer {
  const boundary = randomBytes(30).toString('hex');
  const quote = (text: string) => text.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    const head =
      value instanceof FileData
        ? `Content-Disposition: form-data; name="${quote(name)}"; filename="${quote(value.filename)}"\r\nContent-Type: ${value.content_type}`
        : `Content-Disposition: form-data; name="${quote(name)}"`;
    parts.push(Buffer.from(`--${boundary}\r\n${head}\r\n\r\n`));
    parts.push(value instanceof FileData ? bytesOf(value.data) : Buffer.from(String(value)));
    parts.push(Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  headers['Content-Type'] = `multipart/form-data; boundary=${boundary}`;
  return Buffer.concat(parts);
}

export function encodeBody(body: unknown, headers: Record<string, string>): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof FileData) return bytesOf(body.data);
  if (typeof body === 'object') {
    if (Object.values(body).some((value) => value instanceof FileData)) {
      return multipartBody(body as Record<string, unknown>, headers);
    }
    // k6 form-encodes a plain object.
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    return Buffer.from(
      new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)])).toString(),
    );
  }
  return Buffer.from(String(body));
}

/** The body of a response whose body the script discards. */
export const NO_BODY: DecodedBody = Object.freeze({ body: null });

/** A response body as the script sees it, or k6's 1701 message when it could not be read. */
export interface DecodedBody {
  body: string | ArrayBuffer | null;
  error?: string;
}

/** Decoders for the Content-Encodings k6 reads (zstd needs Node 22.15+: not on Node 20). */
const DECOMPRESSORS: Record<string, (bytes: Buffer) => Buffer> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/**
 * The body as the script sees it: none, binary or text, decompressed per Content-Encoding
 * (as k6 does; a discarded body is not decompressed). `error` is k6's 1701 message.
 */
export function decodeBody(
  chunks: Buffer[],
  responseType: string,
  headers: Record<string, string>,
): DecodedBody {
  if (responseType === 'none') return NO_BODY;
  let buffer: Buffer = Buffer.concat(chunks);
  const encoding = headers['Content-Encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity' && buffer.length > 0) {
    const decompress = DECOMPRESSORS[encoding];
    if (!decompress) {
      return {
        body: null,
        error: `unsupported content encoding "${encoding}" (the engine reads gzip, deflate and br)`,
      };
    }
    try {
      buffer = decompress(buffer);
    } catch (error) {
      return { body: null, error: `error decompressing the ${encoding} body: ${(error as Error).message}` };
    }
  }
  if (responseType === 'binary')
    return {
      body: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer,
    };
  return { body: buffer.toString('utf8') };
}
