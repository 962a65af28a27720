/**
 * The memory of a document's chunks, given back by its consumer once sent (DocumentWriter.recycle) and
 * reused for the next ones, of this response or a later one. A large document's chunks are otherwise
 * each a fresh allocation outside V8's heap, which V8 counts towards its next full collection: many MB
 * of them a request bring full collections every few requests (docs/performance.md, "OGC API -
 * Features").
 */
export class RecycledChunks {
  /** The memory this one allocated: no other is ever reused (a chunk of Node's shared pool, say). */
  private readonly own = new WeakSet<ArrayBuffer>();
  private readonly free: ArrayBuffer[] = [];
  private freeBytes = 0;
  private largest = 0;

  /** `keptBytes`: memory given back beyond this is left to the garbage collector, not kept. */
  constructor(private readonly keptBytes = Number.POSITIVE_INFINITY) {}

  /** A Buffer of `bytes`, in memory given back if any is large enough. */
  buffer(bytes: number): Buffer {
    return this.room(bytes).subarray(0, bytes);
  }

  /**
   * Room for at least `bytes`: all of the memory, given back if any is large enough, as one Buffer (a
   * writer's scratch, of which it then sends what it wrote).
   */
  room(bytes: number): Buffer {
    const index = this.free.findIndex((memory) => memory.byteLength >= bytes);
    if (index !== -1) {
      const memory = this.free.splice(index, 1)[0]!;
      this.freeBytes -= memory.byteLength;
      return Buffer.from(memory);
    }
    // With room to spare, as the next chunks are about as large but seldom exactly; and as large as
    // the largest made, so that memory made for a small chunk serves any later one.
    this.largest = Math.max(this.largest, bytes + (bytes >> 3));
    const made = Buffer.allocUnsafeSlow(this.largest);
    this.own.add(made.buffer as ArrayBuffer);
    return made;
  }

  /** `chunk` is sent and nothing holds it: its memory may be written again. */
  recycle(chunk: Buffer): void {
    const memory = chunk.buffer as ArrayBuffer;
    if (!this.own.has(memory) || this.free.includes(memory)) return;
    if (this.freeBytes + memory.byteLength > this.keptBytes) return;
    this.free.push(memory);
    this.freeBytes += memory.byteLength;
  }
}
