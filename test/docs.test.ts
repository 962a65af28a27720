/**
 * The documentation stays true of the code: the settings table lists exactly the settings the program
 * reads, with their defaults; the numbers the pages state are the ones the code enforces; every link
 * reaches a file of the repository (and a heading or anchor of it), or a public web address; and every
 * repository path the pages name exists.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadSettings, variables } from '../src/config.js';
import { MAX_INTERVAL_DAYS } from '../src/contract.js';
import { DEMO_DAYS, DEMO_STEP_MINUTES } from '../src/demo/seed.js';
import { FRACTION_DIGITS } from '../src/domain/datetime.js';
import { rateLimit, rateLimitPolicy } from '../src/http/hooks/admitClient.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter(Boolean);
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** Every markdown page of the repository. */
const pages = tracked.filter((file) => file.endsWith('.md'));
/** The pages this project's readers are sent to: README, docs/ and the guides beside the README. */
const guides = pages.filter((file) => !file.includes('/') || file.startsWith('docs/'));
/** Their text together: a number stated on any of them must be the code's. */
const prose = guides.map(read).join('\n');

const SETTINGS_PAGE = 'docs/operations/settings.md';

t.test(`the settings table of ${SETTINGS_PAGE} matches src/config.ts`, async (t) => {
  const rows = [...read(SETTINGS_PAGE).matchAll(/^\| `([A-Z_]+)`\s*\| ([^|]+?)\s*\|/gm)].map(
    ([, name, defaultCell]) => ({ name, default: defaultCell?.trim() }),
  );
  t.same(rows.map((r) => r.name).sort(), Object.keys(variables).sort(), 'same variables');
  for (const [name, variable] of Object.entries(variables)) {
    const row = rows.find((r) => r.name === name);
    const expected = 'default' in variable ? `\`${variable.default}\`` : undefined;
    if (expected) t.equal(row?.default, expected, `${name} default`);
    else t.match(row?.default, /^\(.+\)$/, `${name} has no default`);
  }
});

// Where the pages cannot derive a number, this test holds it to the constant or default it comes from.
t.test('the pages state the limits the code enforces', async (t) => {
  const defaults = loadSettings({});
  const numbers = (pattern: RegExp) => [...prose.matchAll(pattern)].map((match) => Number(match[1]));

  const intervals = numbers(/(?:up to|at most) (\d+) days/g);
  t.ok(intervals.length >= 2, 'the longest interval is stated');
  t.same([...new Set(intervals)], [MAX_INTERVAL_DAYS], 'the longest interval, in days');
  t.match(prose, `and ${DEMO_DAYS} days of ${DEMO_STEP_MINUTES}-minute groundwater levels`, 'the demo data');
  t.equal(FRACTION_DIGITS, 6, 'the pages say microseconds are kept');
  t.match(prose, 'microseconds are kept');

  // `NAME` (60), `NAME` (0.5/s), `NAME` (default 5), (`NAME`, 10 s): the default of a setting.
  const mentions = [...prose.matchAll(/`([A-Z][A-Z_]+)`(?: \((?:default )?|, )(\d+(?:\.\d+)?)/g)];
  const stated = mentions.filter(([, name]) => name! in variables);
  t.ok(stated.length >= 8, 'settings named with their value');
  for (const [text, name, value] of stated) {
    t.equal(Number(value), defaults[name as keyof typeof variables], `${text}: the default of ${name}`);
  }

  const burst = defaults.RATE_LIMIT_BURST;
  const secondsPerToken = 1 / defaults.RATE_LIMIT_PER_SECOND;
  t.same(numbers(/\((\d+) per minute\)/g), [defaults.RATE_LIMIT_PER_SECOND * 60], 'refill per minute');
  t.match(
    prose,
    `${burst} quick requests pass, the ${burst + 1}st is 429 with\n  \`Retry-After: ${Math.ceil(secondsPerToken)}\``,
    'the burst, then the wait for the next token',
  );
  const ordinals = ['zeroth', 'first', 'second', 'third', 'fourth', 'fifth'];
  t.match(prose, `in flight; a ${ordinals[defaults.CONCURRENCY_LIMIT + 1]} is 429`, 'the concurrency limit');
  t.match(prose, `\`RateLimit-Policy: ${rateLimitPolicy(defaults)}\``, 'the RateLimit-Policy example');
  t.match(prose, `full again after ${burst * secondsPerToken} s`, 'the window of the policy');
  t.match(prose, `\`RateLimit: ${rateLimit(burst - 1, secondsPerToken)}\``, 'the RateLimit example');
});

t.test(
  'every link of every page reaches a file, heading or anchor of the repository, or the web',
  async (t) => {
    const anchorsOf = new Map<string, Set<string>>();
    const anchors = (file: string) => {
      let found = anchorsOf.get(file);
      if (!found) {
        found = pageAnchors(read(file));
        anchorsOf.set(file, found);
      }
      return found;
    };
    let count = 0;
    for (const page of pages) {
      for (const target of links(read(page))) {
        count++;
        if (/^https?:\/\//.test(target)) continue;
        t.notMatch(target, /^[a-z][a-z+.-]*:/, `${page}: ${target} is a relative link or a web address`);
        const [path = '', anchor] = target.split('#');
        const file = path === '' ? page : normalize(join(dirname(page), decodeURI(path))).replace(/\/$/, '');
        if (relative(ROOT, join(ROOT, file)).startsWith('..')) {
          t.fail(`${page}: ${target} points outside the repository`);
          continue;
        }
        const exists = tracked.includes(file) || tracked.some((other) => other.startsWith(`${file}/`));
        if (!t.ok(exists, `${page}: ${target} reaches a file of the repository`)) continue;
        if (anchor === undefined) continue;
        t.ok(
          file.endsWith('.md') && anchors(file).has(anchor),
          `${page}: ${target} reaches a heading or anchor of ${file}`,
        );
      }
    }
    t.ok(count >= 50, `${count} links`);
  },
);

// The pages, the code's comments and what the tests say of themselves speak of this repository only.
t.test('no page, test or source file cites a document outside the repository', async (t) => {
  const outside = /\.\.\/shared\/|shared\/spec|\bv1\.[0-9]\.md\b|\bdecisions\.md\b|groundwater-read-api\.md/;
  const self = relative(ROOT, fileURLToPath(import.meta.url));
  // bench/ and drills/ keep their own READMEs' words; every other page and every test is checked.
  const files = [
    ...guides,
    ...tracked.filter((file) => (file.startsWith('test/') || file.startsWith('src/')) && file !== self),
  ];
  for (const file of files) {
    if (!/\.(md|ts|mts|mjs|js|json|ya?ml|sh|py)$/.test(file)) continue;
    const lines = read(file)
      .split('\n')
      .flatMap((line, index) => (outside.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : []));
    t.same(lines, [], file);
  }
});

// A guide names the files each step uses: every repository path it names exists.
t.test('the guides name only files that exist', async (t) => {
  const topLevel = new Set(tracked.map((file) => file.split('/')[0]));
  let count = 0;
  for (const page of guides) {
    const named = [...withoutCodeBlocks(read(page)).matchAll(/`([\w.-]+(?:\/[\w.-]+)*\/?)`/g)]
      .map(([, path]) => path!)
      .filter((path) => topLevel.has(path.split('/')[0]!) && (path.includes('/') || tracked.includes(path)));
    for (const path of new Set(named)) {
      count++;
      t.ok(
        tracked.some((file) => file === path || file.startsWith(path.endsWith('/') ? path : `${path}/`)),
        `${page}: ${path}`,
      );
    }
  }
  t.ok(count >= 40, `${count} paths named`);
});

/** The targets of a page's links, code left out. */
function links(markdown: string): string[] {
  return [...withoutCode(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map(([, target]) => target!);
}

/** The anchors of a page: its headings as GitHub names them (a repeated one gets -1, -2, …), and `<a id>`s. */
function pageAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of withoutCodeBlocks(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = githubAnchor(heading!);
    const times = seen.get(base) ?? 0;
    seen.set(base, times + 1);
    anchors.add(times === 0 ? base : `${base}-${times}`);
  }
  for (const [, id] of markdown.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(id!);
  return anchors;
}

function githubAnchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const withoutCodeBlocks = (markdown: string) => markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1$/gm, '');
const withoutCode = (markdown: string) => withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, '');
