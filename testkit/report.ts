/** Medians and plain-text tables: what every benchmark and drill prints. */

/** The median of the values that are numbers; NaN when there is none. */
export function median(values: (number | undefined)[]): number {
  const sorted = values.filter((v): v is number => typeof v === 'number' && !Number.isNaN(v));
  if (sorted.length === 0) return Number.NaN;
  sorted.sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The lower and upper quartiles (the values a quarter and three quarters of the way up the sorted list). */
export function quartiles(values: number[]): [number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  return [sorted[Math.floor(sorted.length / 4)]!, sorted[Math.floor((3 * sorted.length) / 4)]!];
}

/** Ratios as the A/B scripts print them: `median 1.02× (quartiles 0.97× – 1.08×)`. */
export function spread(ratios: number[]): string {
  const [lower, upper] = quartiles(ratios);
  return `median ${ratio(median(ratios))} (quartiles ${ratio(lower)} – ${ratio(upper)})`;
}

/**
 * Columns padded to their widest cell; the columns in `left` (the first unless told) left-aligned, the
 * others right-aligned.
 */
export function printTable(header: string[], rows: string[][], left: number[] = [0]): void {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        left.includes(column) ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
  console.log();
}

export const ms = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} ms`;
export const mb = (value: number) => `${value.toFixed(1)} MB`;
export const ratio = (value: number) => `${value.toFixed(2)}×`;
export const count = (value: number) => Math.round(value).toLocaleString('en-US');

/** What the figures were measured on, for the top of every report. */
export async function machineLine(): Promise<string> {
  const { cpus, totalmem } = await import('node:os');
  const cpu = cpus();
  return (
    `${new Date().toISOString().slice(0, 16)}Z, Node ${process.version}, ${cpu.length} × ` +
    `${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`
  );
}

/** The machine's load average (1, 5 and 15 minutes), for a report: the cores are shared. */
export async function loadLine(): Promise<string> {
  const { loadavg } = await import('node:os');
  return `load average ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`;
}
