/**
 * Errors of an import, reported as `FILE:LINE: field: reason`. Only the first few are kept: a file of a
 * million bad rows must not cost a million objects, but the operator still learns how many there are.
 */
import { UserError } from '../errors.js';

export interface LineError {
  line: number;
  field: string;
  reason: string;
}

/** How many errors are printed; the rest are counted. */
export const SHOWN_ERRORS = 20;

const count = (n: number) => n.toLocaleString('en-US');

/** The first `SHOWN_ERRORS` errors by line, and the number of all of them. */
export class ErrorCollector {
  private readonly kept: LineError[] = [];
  private count = 0;

  add(line: number, field: string, reason: string): void {
    this.count++;
    const last = this.kept[this.kept.length - 1];
    if (this.kept.length === SHOWN_ERRORS && last !== undefined && line >= last.line) return;
    this.kept.push({ line, field, reason });
    // Errors usually arrive in line order (then this never sorts); merged sources may not.
    if (last !== undefined && line < last.line) this.kept.sort((a, b) => a.line - b.line);
    if (this.kept.length > SHOWN_ERRORS) this.kept.pop();
  }

  /** Adds errors of which only the first ones are known, and how many there are in all. */
  addCounted(first: readonly LineError[], total: number): void {
    for (const error of first) this.add(error.line, error.field, error.reason);
    this.count += total - first.length;
  }

  get total(): number {
    return this.count;
  }

  get first(): readonly LineError[] {
    return this.kept;
  }
}

/** A file that was refused as a whole: nothing of it was imported. */
export class ImportRejected extends UserError {
  override name = 'ImportRejected';
  readonly errors: readonly LineError[];
  readonly total: number;

  constructor(
    readonly file: string,
    errors: ErrorCollector,
  ) {
    super(`${file}: ${count(errors.total)} ${errors.total === 1 ? 'error' : 'errors'}; nothing was imported`);
    this.errors = [...errors.first];
    this.total = errors.total;
  }

  /** The report for standard error: one line per error shown, then how many more there are. */
  report(): string {
    const lines = this.errors.map((e) => `${this.file}:${e.line}: ${e.field}: ${e.reason}\n`);
    const more = this.total - this.errors.length;
    if (more > 0) lines.push(`… and ${count(more)} more ${more === 1 ? 'error' : 'errors'}\n`);
    return lines.join('');
  }
}
