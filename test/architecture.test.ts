/**
 * The rule of which folder of src/ may import which (docs/architecture.md, "Which folder may import
 * which"), read from every import of every source file.
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

/** Each file's imports: src-relative paths of its own modules, and package names. */
async function importsOf(file: string): Promise<{ modules: string[]; packages: string[] }> {
  const text = await readFile(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map(([, spec]) => spec!);
  return {
    modules: specifiers
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(SRC, resolve(dirname(file), spec)).replace(/\.js$/, '.ts')),
    packages: specifiers.filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:')),
  };
}

const files = await sourceFiles(SRC);
const graph = new Map(
  await Promise.all(files.map(async (file) => [relative(SRC, file), await importsOf(file)] as const)),
);

/** Every import of a file under `from` that `forbidden` refuses, as `file → import`. */
function violations(
  from: string,
  forbidden: (module: string) => boolean,
  packages: (name: string) => boolean = () => false,
) {
  const found: string[] = [];
  for (const [file, { modules, packages: names }] of graph) {
    if (!file.startsWith(from)) continue;
    for (const module of modules) if (forbidden(module)) found.push(`${file} → ${module}`);
    for (const name of names) if (packages(name)) found.push(`${file} → ${name}`);
  }
  return found;
}

const ENDPOINTS = ['v1/wells/', 'v1/series/', 'v1/network/', 'v1/latest/'];
const isHttp = (name: string) =>
  name === 'fastify' || name.startsWith('@fastify/') || name.startsWith('fastify-');

t.test('the rule holds for the whole tree', async (t) => {
  t.ok(graph.size > 100, `${graph.size} source files read`);
  t.ok(
    [...graph.values()].some(({ modules }) => modules.includes('engine/document.ts')),
    'the reader finds imports',
  );
});

t.test('src/http imports nothing from src/v1', async (t) => {
  t.same(
    violations('http/', (m) => m.startsWith('v1/')),
    [],
  );
});

t.test('the engine and sync tokens know no HTTP and no endpoint', async (t) => {
  for (const folder of ['engine/', 'sync/', 'domain/']) {
    t.same(
      violations(folder, (m) => m.startsWith('http/') || m.startsWith('v1/') || m === 'app.ts', isHttp),
      [],
      folder,
    );
  }
});

t.test('src/db is the bottom layer: it imports no feature', async (t) => {
  const features = ['http/', 'v1/', 'engine/', 'sync/', 'keys/', 'limits/', 'importers/', 'app.ts'];
  t.same(
    violations('db/', (m) => features.some((f) => m.startsWith(f))),
    [],
  );
});

t.test('keys and limits know no request: their hooks are src/http/hooks/', async (t) => {
  for (const folder of ['keys/', 'limits/'])
    t.same(
      violations(folder, (m) => m.startsWith('http/'), isHttp),
      [],
      folder,
    );
});

t.test('endpoints import the engine, not each other', async (t) => {
  for (const endpoint of ENDPOINTS) {
    const others = ENDPOINTS.filter((e) => e !== endpoint);
    t.same(
      violations(endpoint, (m) => others.some((o) => m.startsWith(o))),
      [],
      endpoint,
    );
  }
});

t.test('only the composition root and the server compose the /v1 plugin', async (t) => {
  const importers = [...graph]
    .filter(([, { modules }]) => modules.includes('v1/plugin.ts'))
    .map(([file]) => file);
  t.same(importers, ['app.ts']);
});
