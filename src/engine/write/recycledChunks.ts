/**
 * The memory of a document's chunks, given back by its consumer once sent (DocumentWriter.recycle) and
 * reused for the next ones. A large document's chunks are otherwise each a fresh allocation outside
 * V8's heap, which V8 counts towards its next full collection: many MB of them a request bring full
 * collections every few requests (docs/performance.md, "OGC API - Features").
 */
export class RecycledChunks {
  /** The memory this one allocated: no other is ever reused (a chunk of Node's shared pool, say). */
  private readonly own = new WeakSet<ArrayBuffer>();
  private readonly free: ArrayBuffer[] = [];

  /** A Buffer of `bytes`, in memory given back if any is large enough. */
  buffer(bytes: number): Buffer {
    const index = this.free.findIndex((memory) => memory.byteLength >= bytes);
    if (index !== -1) return Buffer.from(this.free.splice(index, 1)[0]!, 0, bytes);
    // With room to spare, as the next chunks are about as large but seldom exactly.
    const made = Buffer.allocUnsafeSlow(bytes + (bytes >> 3));
    this.own.add(made.buffer as ArrayBuffer);
    return made.subarray(0, bytes);
  }

  /** `chunk` is sent and nothing holds it: its memory may be written again. */
  recycle(chunk: Buffer): void {
    const memory = chunk.buffer as ArrayBuffer;
    if (this.own.has(memory) && !this.free.includes(memory)) this.free.push(memory);
  }
}
