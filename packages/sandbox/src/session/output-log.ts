/**
 * A job's output: one stream of bytes, addressed by offsets from its first byte, of which the
 * last `maxBytes` are kept. A read names where it starts (`since`) and learns where to go on
 * (`next`), so that a reader loses nothing it could have had and learns how much was dropped.
 */
export class OutputLog {
  readonly #maxBytes: number;
  #chunks: Buffer[] = [];
  /** Bytes kept. */
  #kept = 0;
  /** Bytes ever written. */
  #total = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes ever written: the offset of the end. */
  get total(): number {
    return this.#total;
  }

  /** Bytes dropped from the start to stay within the bound. */
  get dropped(): number {
    return this.#total - this.#kept;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    const copy = Buffer.from(chunk);
    this.#chunks.push(copy);
    this.#kept += copy.length;
    this.#total += copy.length;
    while (this.#kept > this.#maxBytes) {
      const first = this.#chunks[0] as Buffer;
      const excess = this.#kept - this.#maxBytes;
      if (first.length <= excess) {
        this.#chunks.shift();
        this.#kept -= first.length;
      } else {
        this.#chunks[0] = first.subarray(excess);
        this.#kept -= excess;
      }
    }
  }

  /** The kept bytes from offset `from` (at least the first kept one) to the end. */
  bytesFrom(from: number): { start: number; bytes: Buffer } {
    const start = Math.max(from, this.dropped);
    if (start >= this.#total) return { start: this.#total, bytes: Buffer.alloc(0) };
    const all =
      this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    this.#chunks = [all];
    return { start, bytes: all.subarray(start - this.dropped) };
  }

  /**
   * At most `maxBytes` from `since`, never cutting a character in two: a read that starts in the
   * middle of one (its start was dropped) skips its rest, and one that ends in the middle of one
   * stops before it, unless `complete` says no more bytes will come.
   */
  read(
    since: number,
    maxBytes: number,
    complete: boolean,
  ): { since: number; next: number; bytes: Buffer } {
    let { start, bytes } = this.bytesFrom(since);
    let lead = 0;
    if (start > since) {
      while (lead < bytes.length && lead < 3 && isContinuation(bytes[lead] as number)) lead += 1;
    }
    start += lead;
    bytes = bytes.subarray(lead);
    let end = Math.min(bytes.length, maxBytes);
    if (end < bytes.length || !complete) end = wholeCharacters(bytes, end);
    if (end === 0 && bytes.length > 0 && (maxBytes < 4 || complete))
      end = Math.min(bytes.length, maxBytes);
    return { since: start, next: start + end, bytes: bytes.subarray(0, end) };
  }
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** The largest length up to `end` that does not end inside a UTF-8 character. */
function wholeCharacters(bytes: Buffer, end: number): number {
  let lead = end;
  let back = 0;
  while (lead > 0 && back < 4 && isContinuation(bytes[lead - 1] as number)) {
    lead -= 1;
    back += 1;
  }
  if (lead === 0) return end;
  const first = bytes[lead - 1] as number;
  const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  return length === 1 || lead - 1 + length <= end ? end : lead - 1;
}
