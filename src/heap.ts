/**
 * The V8 heap bounds of every `gwapi` process, however it is started (`npx gwapi`, `npm start`,
 * `node dist/cli.js`, the image): this is their one source.
 *
 * - Old generation: V8's default limit grows with the host, so without a bound a replica's heap is
 *   whatever the host allows rather than what it was sized for. A stream leaves nothing there
 *   (docs/decisions/0015-young-generation.md); the bound leaves room for DATABASE_POOL_MAX streams in
 *   flight and the discovery cache: raise them together.
 * - Young generation: Node 24 lets each of its three semi-spaces grow to 64 MB, Node 20 to 16 MB; 16
 *   keeps the memory the service was measured and sized with
 *   (docs/decisions/0005-heap-options-on-every-start-path.md).
 *
 * V8 reads both when it sets up the heap, before any script runs: `v8.setFlagsFromString` then changes
 * the flag but not the heap. So the process replaces itself once, with the options added before its
 * own (process.execve: the same pid, standard streams and signals). A flag the operator gives, in
 * NODE_OPTIONS or on node's command line, is kept as given.
 */

export const SERVICE_NODE_OPTIONS = ['--max-old-space-size=384', '--max-semi-space-size=16'];

/** A V8 option's flag, as V8 compares them: `--max_semi_space_size=8` is `max-semi-space-size`. */
const flagOf = (option: string) => option.replace(/^--/, '').split('=')[0]!.replaceAll('_', '-');

/** NODE_OPTIONS's options, as Node splits them: at spaces, outside double quotes. */
const NODE_OPTION = /"((?:\\.|[^"\\])*)"|(\S+)/g;
const nodeOptionsOf = (text: string) =>
  [...text.matchAll(NODE_OPTION)].map(([, quoted, bare]) => bare ?? quoted!.replace(/\\(.)/g, '$1'));

/** The options of SERVICE_NODE_OPTIONS whose flag neither node's command line nor NODE_OPTIONS sets. */
export function missingHeapOptions(execArgv: readonly string[], nodeOptions = ''): string[] {
  const given = new Set(
    [...nodeOptionsOf(nodeOptions), ...execArgv].filter((option) => option.startsWith('--')).map(flagOf),
  );
  return SERVICE_NODE_OPTIONS.filter((option) => !given.has(flagOf(option)));
}

/**
 * Returns when this process runs with the service's heap; otherwise it is replaced by itself with the
 * missing options, and this does not return. Where execve is not available (Windows), V8's defaults stay.
 */
export function withServiceHeap(): void {
  const missing = missingHeapOptions(process.execArgv, process.env.NODE_OPTIONS);
  if (missing.length === 0 || !process.execve) return;
  const args = [...missing, ...process.execArgv, ...process.argv.slice(1)];
  process.execve(process.execPath, [process.execPath, ...args], process.env);
}
