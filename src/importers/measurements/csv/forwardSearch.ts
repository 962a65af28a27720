/**
 * `indexOf` for a scan that moves forward through a long text line by line. A plain indexOf per line
 * would run on past the line's end (to the next quote, maybe megabytes later) and make a chunk cost
 * quadratic time. So each result is kept: it answers every search that starts between where that
 * search started and what it found.
 */
export class ForwardSearch {
  private text = '';
  private from = 0;
  private found = -1;

  constructor(private readonly needle: string) {}

  reset(text: string): void {
    this.text = text;
    this.from = 0;
    this.found = -1;
  }

  /** The first occurrence at or after `from`, or the text's length when there is none. */
  next(from: number): number {
    if (from < this.from || from > this.found) {
      const at = this.text.indexOf(this.needle, from);
      this.from = from;
      this.found = at === -1 ? this.text.length : at;
    }
    return this.found;
  }
}
