/**
 * Bodies kept in the process up to a byte budget, the least recently used dropped first, so that many
 * distinct keys cannot grow the process. An entry may grow after it is kept (a compressed form made
 * later); the one that grows, or was just kept, is never the one dropped for it.
 */
export class ByteBudgetCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private totalBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The value kept under `key`, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, bytes: number): void {
    const previous = this.entries.get(key);
    if (previous) this.totalBytes -= previous.bytes;
    this.entries.delete(key);
    this.entries.set(key, { value, bytes });
    this.totalBytes += bytes;
    this.trim(key);
  }

  /** Counts `bytes` more for `value`, if it is still the one kept under `key`. */
  grow(key: string, value: V, bytes: number): void {
    const entry = this.entries.get(key);
    if (entry?.value !== value) return;
    entry.bytes += bytes;
    this.totalBytes += bytes;
    this.trim(key);
  }

  /** Drops the least recently used entries, never `kept`, until the budget holds. */
  private trim(kept: string): void {
    for (const [key, entry] of this.entries) {
      if (this.totalBytes <= this.maxBytes) break;
      if (key === kept) continue;
      this.entries.delete(key);
      this.totalBytes -= entry.bytes;
    }
  }
}
