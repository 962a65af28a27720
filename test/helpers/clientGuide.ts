/** The recipes of the client guide (docs/clients.md), as the tests run them. */
import { readFileSync } from 'node:fs';

const GUIDE = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');

/** The guide's code block whose first line is a comment naming `file` (`# sync.sh: …`, `// year.ts: …`). */
export function recipe(file: string): string {
  const blocks = [...GUIDE.matchAll(/^```\w+\n([\s\S]*?)^```$/gm)].map(([, code]) => code!);
  const named = blocks.filter((code) => new RegExp(`^(//|#) ${file.replace('.', '\\.')}[: ]`).test(code));
  if (named.length !== 1) throw new Error(`${named.length} blocks of docs/clients.md named ${file}`);
  return named[0]!;
}
