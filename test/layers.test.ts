/**
 * The layers around the service: test/, bench/ and drills/ share code only through testkit/, and
 * testkit/ builds on none of them. A drill's test runs what testkit/drills/ holds, or the drill's entry
 * point as a process; a benchmark and a drill never reach into each other. Every import specifier of
 * every source file is read with TypeScript's own scanner (static, dynamic and re-exports alike).
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import t from 'tap';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
const LAYERS = ['bench', 'drills', 'test', 'testkit'] as const;
type Layer = (typeof LAYERS)[number];
/** What each layer may import of the others (src/ and packages are open to all). */
const MAY_IMPORT: Record<Layer, Layer[]> = {
  bench: ['bench', 'testkit'],
  drills: ['drills', 'testkit'],
  test: ['test', 'testkit'],
  testkit: ['testkit'],
};

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, folder), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && /\.(ts|mjs)$/.test(entry.name))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .filter((file) => !file.split(sep).includes('node_modules'));
}

/** The layer a relative specifier of `file` lands in, or undefined outside the four. */
function layerOf(file: string, specifier: string): Layer | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(ROOT, resolve(ROOT, dirname(file), specifier));
  return LAYERS.find((layer) => target === layer || target.startsWith(`${layer}${sep}`));
}

/** Every import of `file` that crosses into a layer it may not use: "file → specifier". */
async function forbiddenImports(file: string): Promise<string[]> {
  const layer = LAYERS.find((name) => file.startsWith(`${name}${sep}`))!;
  const { importedFiles } = ts.preProcessFile(await readFile(join(ROOT, file), 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((specifier) => {
      const target = layerOf(file, specifier);
      return target !== undefined && !MAY_IMPORT[layer].includes(target);
    })
    .map((specifier) => `${file} → ${specifier}`);
}

t.test('bench/, drills/ and test/ share only testkit/, which imports none of them', async (t) => {
  const files = (await Promise.all(LAYERS.map(sourceFiles))).flat();
  t.ok(files.length > 200, `${files.length} files read`);
  const forbidden = (await Promise.all(files.map(forbiddenImports))).flat();
  t.same(forbidden, []);
});

t.test('the scanner sees each kind of import', async (t) => {
  const { importedFiles } = ts.preProcessFile(
    [
      "import { a } from '../bench/a.js';",
      "import type { B } from '../drills/b.js';",
      "export { c } from '../test/c.js';",
      "const d = await import('../bench/d.js');",
    ].join('\n'),
    true,
    true,
  );
  const specifiers = importedFiles.map(({ fileName }) => fileName);
  t.same(specifiers, ['../bench/a.js', '../drills/b.js', '../test/c.js', '../bench/d.js']);
  t.same(
    specifiers.map((specifier) => layerOf(join('testkit', 'x.ts'), specifier)),
    ['bench', 'drills', 'test', 'bench'],
  );
  t.equal(layerOf(join('testkit', 'drills', 'x.ts'), '../fixtures.js'), 'testkit');
  t.equal(layerOf(join('test', 'x.ts'), '../src/app.js'), undefined, 'src/ is no layer of these');
});
