/**
 * Values kept in the process up to a budget of their costs (a body's bytes, or one apiece), the least
 * recently used dropped first, so that many distinct keys cannot grow the process. An entry may grow
 * after it is kept (a compressed form made later); the one that grows, or was just kept, is never the
 * one dropped for it.
 */
export class BudgetCache<V> {
  private readonly entries = new Map<string, { value: V; cost: number }>();
  private totalCost = 0;

  constructor(private readonly budget: number) {}

  /** The value kept under `key`, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, cost: number): void {
    const previous = this.entries.get(key);
    if (previous) this.totalCost -= previous.cost;
    this.entries.delete(key);
    this.entries.set(key, { value, cost });
    this.totalCost += cost;
    this.trim(key);
  }

  /** Counts `cost` more for `value`, if it is still the one kept under `key`. */
  grow(key: string, value: V, cost: number): void {
    const entry = this.entries.get(key);
    if (entry?.value !== value) return;
    entry.cost += cost;
    this.totalCost += cost;
    this.trim(key);
  }

  /** Drops the least recently used entries, never `kept`, until the budget holds. */
  private trim(kept: string): void {
    for (const [key, entry] of this.entries) {
      if (this.totalCost <= this.budget) break;
      if (key === kept) continue;
      this.entries.delete(key);
      this.totalCost -= entry.cost;
    }
  }
}
