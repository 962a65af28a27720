/**
 * How a drill ends (docs/operations/drills.md): each problem on a line of its own, then PASS and exit
 * code 0 when there are none, FAIL and exit code 1 otherwise.
 */
export function exitWithVerdict(problems: readonly string[]): never {
  for (const problem of problems) console.log(`problem: ${problem}`);
  console.log(problems.length === 0 ? 'PASS' : 'FAIL');
  process.exit(problems.length === 0 ? 0 : 1);
}
