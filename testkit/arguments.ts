/**
 * A drill's or benchmark's positional arguments as numbers, each absent one its default:
 *
 *   const [ROUNDS, REQUESTS] = numberArguments(5, 40);   // npm run bench -- latest 3 → 3, 40
 */
export function numberArguments<const Defaults extends readonly number[]>(...defaults: Defaults) {
  return defaults.map((fallback, at) => Number(process.argv[2 + at] ?? fallback)) as {
    -readonly [At in keyof Defaults]: number;
  };
}

/** Arguments the script does not take: `usage: LINE` on stderr, exit code 2, nothing started. */
export function exitWithUsage(line: string): never {
  console.error(`usage: ${line}`);
  process.exit(2);
}
