/** The snippets of the client guide (docs/clients.md), as the tests run them. */
import { readFileSync } from 'node:fs';

const GUIDE = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');

/** Every code block of the guide, with its language, in the guide's order. */
const BLOCKS = [...GUIDE.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, language, code]) => ({
  language: language!,
  code: code!,
}));

/** Every code block of the guide in `language`. */
export const codeBlocks = (language: string): string[] =>
  BLOCKS.filter((block) => block.language === language).map((block) => block.code);

/** Whether a block is a recipe: its first line is a comment naming its file (`# sync.sh: …`). */
export const isRecipe = (code: string) => /^(\/\/|#) [\w-]+\.\w+[: ]/.test(code);

/** The guide's code block whose first line is a comment naming `file` (`# sync.sh: …`, `// year.ts: …`). */
export function recipe(file: string): string {
  const named = BLOCKS.filter(({ code }) => isRecipe(code) && code.split(/[: \n]/)[1] === file);
  if (named.length !== 1) throw new Error(`${named.length} blocks of docs/clients.md named ${file}`);
  return named[0]!.code;
}
