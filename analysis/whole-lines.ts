// A text stream that ends at its last whole line when its source was cut off.
import { Transform, type TransformCallback } from 'node:stream';

/**
 * Passes text through, holding back what follows the last line break. At the end the held
 * part is passed on (a file may end without a final newline), unless `cutOff()` said the
 * source stopped mid-stream (a gzip file cut short when its writer was killed): then the
 * part line is dropped, since a row cut in the middle can still look like a whole one
 * (`…,1.5` of `…,1.53`), and its bytes are counted in `droppedBytes`.
 */
export class WholeLines extends Transform {
  #partial: Buffer = Buffer.alloc(0);
  #cut = false;
  /** Bytes of the part line dropped at a cut. */
  droppedBytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const newline = chunk.lastIndexOf(0x0a);
    if (newline < 0) {
      this.#partial = Buffer.concat([this.#partial, chunk]);
      done();
      return;
    }
    // The chunk itself is passed on, not a copy of it: only the held part line is joined.
    let from = 0;
    if (this.#partial.length > 0) {
      from = chunk.indexOf(0x0a) + 1;
      this.push(Buffer.concat([this.#partial, chunk.subarray(0, from)]));
    }
    if (from <= newline) this.push(chunk.subarray(from, newline + 1));
    this.#partial = Buffer.from(chunk.subarray(newline + 1));
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.#cut) {
      this.droppedBytes = this.#partial.length;
      done();
      return;
    }
    done(null, this.#partial.length > 0 ? this.#partial : undefined);
  }

  /** The source stopped mid-stream: end here, without the part line. */
  cutOff(): void {
    this.#cut = true;
    this.end();
  }
}
