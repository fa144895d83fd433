// Bytes in and out of scripts: k6 modules take strings or ArrayBuffers and return ArrayBuffers.

/** A string (as UTF-8) or an ArrayBuffer/view as a Buffer. */
export function bytesOf(input: unknown): Buffer {
  if (typeof input === 'string') return Buffer.from(input, 'utf8');
  if (input instanceof ArrayBuffer) return Buffer.from(input);
  if (ArrayBuffer.isView(input)) return Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  throw new Error(`expected a string or an ArrayBuffer, got ${typeof input}`);
}

export function toArrayBuffer(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
