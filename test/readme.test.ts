import { readFile } from 'node:fs/promises';
import t from 'tap';
import { variables } from '../src/config.js';

// The README's settings table is documentation operators rely on: it must list exactly the settings
// the program reads, with the defaults the program uses.
t.test('README settings table matches src/config.ts', async (t) => {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const rows = [...readme.matchAll(/^\| `([A-Z_]+)`\s*\| ([^|]+?)\s*\|/gm)].map(([, name, defaultCell]) => ({
    name,
    default: defaultCell?.trim(),
  }));
  t.same(rows.map((r) => r.name).sort(), Object.keys(variables).sort(), 'same variables');
  for (const [name, variable] of Object.entries(variables)) {
    const row = rows.find((r) => r.name === name);
    const expected = 'default' in variable ? `\`${variable.default}\`` : undefined;
    if (expected) t.equal(row?.default, expected, `${name} default`);
    else t.match(row?.default, /^\(.+\)$/, `${name} has no default`);
  }
});
