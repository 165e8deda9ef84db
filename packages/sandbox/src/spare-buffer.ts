/**
 * One buffer kept between uses, so that a run of big file transfers does not allocate a fresh
 * buffer each time: a fresh one costs a page fault per 4 KiB on first touch, and, a megabyte at a
 * time, pushes the garbage collector into full collections. A use that finds it taken (concurrent
 * transfers) gets a buffer of its own. Only buffers it handed out are taken back, and only once
 * nothing else holds them: the caller says when.
 */
export class SpareBuffer {
  readonly #maxBytes: number;
  #spare: ArrayBuffer | undefined;
  readonly #ours = new WeakSet<ArrayBuffer>();

  /** `maxBytes`: larger transfers get a buffer of their own and leave the spare as it is. */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** A buffer of exactly `bytes` bytes, uninitialized. */
  take(bytes: number): Buffer {
    if (bytes > this.#maxBytes) return Buffer.allocUnsafeSlow(bytes);
    let spare = this.#spare;
    this.#spare = undefined;
    if (spare === undefined || spare.byteLength < bytes) {
      // Powers of two, so that a run of slightly larger files does not reallocate each time.
      let size = 64 * 1024;
      while (size < bytes) size *= 2;
      spare = Buffer.allocUnsafeSlow(Math.min(size, this.#maxBytes)).buffer as ArrayBuffer;
      this.#ours.add(spare);
    }
    return Buffer.from(spare, 0, bytes);
  }

  /**
   * A buffer of at least `bytes` bytes, uninitialized, that spans all of the spare's memory up to
   * `most` bytes: for a buffer that grows, so that it can grow in place.
   */
  takeRoom(bytes: number, most: number): Buffer {
    const taken = this.take(bytes);
    const room = Math.min(taken.buffer.byteLength, Math.max(bytes, most));
    return room === taken.length ? taken : Buffer.from(taken.buffer, 0, room);
  }

  /** Keep the memory of `buffer` (from {@link take}) for the next use: nothing may use it after. */
  giveBack(buffer: Buffer): void {
    const memory = buffer.buffer as ArrayBuffer;
    if (!this.#ours.has(memory)) return;
    if (this.#spare === undefined || this.#spare.byteLength < memory.byteLength) {
      this.#spare = memory;
    }
  }
}
