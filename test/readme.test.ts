import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadSettings, variables } from '../src/config.js';
import { DEMO_DAYS, DEMO_STEP_MINUTES } from '../src/demo/seed.js';
import { FRACTION_DIGITS } from '../src/domain/datetime.js';
import { rateLimit, rateLimitPolicy } from '../src/limits/admitClient.js';
import { MAX_INTERVAL_DAYS } from '../src/v1/series/query.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');

// The README's settings table is documentation operators rely on: it must list exactly the settings
// the program reads, with the defaults the program uses.
t.test('README settings table matches src/config.ts', async (t) => {
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

// Numbers the README states in prose: each must be what the code enforces. Where the README can't
// derive them, this test holds them to the constants and defaults they come from.
t.test('README prose states the limits the code enforces', async (t) => {
  const defaults = loadSettings({});
  const numbers = (pattern: RegExp) => [...readme.matchAll(pattern)].map((match) => Number(match[1]));

  const intervals = numbers(/(?:up to|at most) (\d+) days/g);
  t.ok(intervals.length >= 2, 'the longest interval is stated');
  t.same([...new Set(intervals)], [MAX_INTERVAL_DAYS], 'the longest interval, in days');
  t.match(readme, `and ${DEMO_DAYS} days of ${DEMO_STEP_MINUTES}-minute groundwater levels`, 'the demo data');
  t.equal(FRACTION_DIGITS, 6, 'the README says microseconds are kept');
  t.match(readme, 'microseconds are kept');

  // `NAME` (60), `NAME` (0.5/s), `NAME` (default 5), (`NAME`, 10 s): the default of a setting.
  const mentions = [...readme.matchAll(/`([A-Z][A-Z_]+)`(?: \((?:default )?|, )(\d+(?:\.\d+)?)/g)];
  const stated = mentions.filter(([, name]) => name! in variables);
  t.ok(stated.length >= 8, 'settings named with their value');
  for (const [text, name, value] of stated) {
    t.equal(Number(value), defaults[name as keyof typeof variables], `${text}: the default of ${name}`);
  }

  const burst = defaults.RATE_LIMIT_BURST;
  const secondsPerToken = 1 / defaults.RATE_LIMIT_PER_SECOND;
  t.same(numbers(/\((\d+) per minute\)/g), [defaults.RATE_LIMIT_PER_SECOND * 60], 'refill per minute');
  t.match(
    readme,
    `${burst} quick requests pass, the ${burst + 1}st is 429 with\n  \`Retry-After: ${Math.ceil(secondsPerToken)}\``,
    'the burst, then the wait for the next token',
  );
  const ordinals = ['zeroth', 'first', 'second', 'third', 'fourth', 'fifth'];
  t.match(readme, `in flight; a ${ordinals[defaults.CONCURRENCY_LIMIT + 1]} is 429`, 'the concurrency limit');
  t.match(readme, `\`RateLimit-Policy: ${rateLimitPolicy(defaults)}\``, 'the RateLimit-Policy example');
  t.match(readme, `full again after ${burst * secondsPerToken} s`, 'the window of the policy');
  t.match(readme, `\`RateLimit: ${rateLimit(burst - 1, secondsPerToken)}\``, 'the RateLimit example');
});

// Links within the README reach a heading (as GitHub names its anchor) or an explicit anchor.
t.test('README links to its own sections resolve', async (t) => {
  const anchors = new Set([
    ...[...readme.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) => githubAnchor(heading!)),
    ...[...readme.matchAll(/<a id="([^"]+)"><\/a>/g)].map(([, id]) => id!),
  ]);
  const links = [...readme.matchAll(/\]\(#([^)]+)\)/g)].map(([, anchor]) => anchor!);
  t.ok(links.length >= 10, `${links.length} links`);
  for (const link of links) t.ok(anchors.has(link), `#${link}`);
});

// The operator guide names the files each step uses: every repository path the README names exists.
t.test('README names only files that exist', async (t) => {
  const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n');
  const topLevel = new Set(tracked.map((file) => file.split('/')[0]));
  const named = [...readme.matchAll(/`([\w.-]+(?:\/[\w.-]+)*\/?)`/g)]
    .map(([, path]) => path!)
    .filter((path) => topLevel.has(path.split('/')[0]!) && (path.includes('/') || tracked.includes(path)));
  t.ok(named.length >= 40, `${named.length} paths named`);
  for (const path of new Set(named)) {
    t.ok(
      tracked.some((file) => file === path || file.startsWith(path.endsWith('/') ? path : `${path}/`)),
      path,
    );
  }
});

function githubAnchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
