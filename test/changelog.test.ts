/**
 * CHANGELOG.md: Keep a Changelog 1.0.0 in form, and its newest release is the version the service
 * serves (one value in `API-Version`, the OpenAPI `info.version` and the changelog).
 *
 * A parser of our own: the format is a handful of line shapes, and the checks are on the shapes
 * themselves. The `keep-a-changelog` package sorts releases as it parses (hiding a wrong order),
 * accepts one-digit months, and reads link references without checking them.
 */
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { API_VERSION } from '../src/contract.js';
import { startApi } from './helpers/api.js';
import { get } from './helpers/http.js';

const SECTION_KINDS = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];

interface Release {
  /** `Unreleased` or MAJOR.MINOR.PATCH */
  version: string;
  date?: string;
  sections: { kind: string; entries: number }[];
}

interface Changelog {
  title: string;
  intro: string;
  releases: Release[];
  /** Link reference labels, lower-cased as Markdown matches them. */
  links: Map<string, string>;
}

function parseChangelog(text: string): Changelog {
  const changelog: Changelog = { title: '', intro: '', releases: [], links: new Map() };
  for (const line of text.split('\n')) {
    const release = /^## \[([^\]]+)\](?: - (.+))?$/.exec(line);
    const section = /^### (.+)$/.exec(line);
    const link = /^\[([^\]]+)\]: (\S+)$/.exec(line);
    const current = changelog.releases.at(-1);
    if (line.startsWith('# ')) changelog.title = line.slice(2);
    else if (release) changelog.releases.push({ version: release[1]!, date: release[2], sections: [] });
    else if (section) current?.sections.push({ kind: section[1]!, entries: 0 });
    else if (link) changelog.links.set(link[1]!.toLowerCase(), link[2]!);
    else if (line.startsWith('- ') && current?.sections.at(-1)) current.sections.at(-1)!.entries++;
    else if (!current) changelog.intro += `${line}\n`;
  }
  return changelog;
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)$/;
const compareVersions = (a: string, b: string) => {
  const [x, y] = [SEMVER.exec(a)!.slice(1).map(Number), SEMVER.exec(b)!.slice(1).map(Number)];
  return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
};

const changelog = parseChangelog(await readFile(new URL('../CHANGELOG.md', import.meta.url), 'utf8'));
const [unreleased, ...released] = changelog.releases;

t.test('CHANGELOG.md has the structure of Keep a Changelog 1.0.0', async (t) => {
  t.equal(changelog.title, 'Changelog');
  t.match(changelog.intro, /\[Keep a Changelog\]\(https:\/\/keepachangelog\.com\/en\/1\.0\.0\/\)/);
  t.match(changelog.intro, /\[Semantic Versioning\]\(https:\/\/semver\.org\//);
  t.equal(unreleased?.version, 'Unreleased', 'Unreleased comes first');
  t.equal(unreleased?.date, undefined, 'Unreleased has no date');
  t.ok(released.length > 0, 'at least one release');
  for (const release of released) {
    t.match(release.version, SEMVER, `${release.version} is MAJOR.MINOR.PATCH`);
    t.match(release.date, /^\d{4}-\d{2}-\d{2}$/, `${release.version} has an ISO date`);
    t.equal(new Date(`${release.date}T00:00:00Z`).toISOString().slice(0, 10), release.date, 'a real date');
    t.ok(release.sections.length > 0, `${release.version} lists its changes`);
  }
  for (const release of changelog.releases) {
    for (const section of release.sections) {
      t.ok(SECTION_KINDS.includes(section.kind), `${release.version}: "${section.kind}" is a standard kind`);
      t.ok(section.entries > 0, `${release.version}: ${section.kind} is not empty`);
    }
    t.same(
      release.sections.map((s) => s.kind),
      [...new Set(release.sections.map((s) => s.kind))],
      `${release.version}: each kind once`,
    );
    t.ok(changelog.links.has(release.version.toLowerCase()), `a link reference for ${release.version}`);
  }
  for (const [newer, older] of released.slice(0, -1).map((r, i) => [r, released[i + 1]!])) {
    t.ok(compareVersions(newer!.version, older!.version) > 0, `${newer!.version} above ${older!.version}`);
    t.ok(newer!.date! >= older!.date!, `${newer!.version} is not dated before ${older!.version}`);
  }
});

t.test('the newest release is the version a real server serves', async (t) => {
  const newest = released[0]?.version;
  t.equal(newest, API_VERSION, 'API_VERSION in src/v1/contract.ts');
  const api = await startApi(t);
  const document = await get(api.base, '/v1/openapi.json');
  t.equal(document.status, 200);
  t.equal(document.headers['api-version'], newest, 'API-Version header');
  t.equal(JSON.parse(document.body).info.version, newest, 'info.version of /v1/openapi.json');
  const discovery = await get(api.base, '/v1/groundwater-monitoring-wells');
  t.equal(discovery.status, 401);
  t.equal(discovery.headers['api-version'], newest, 'API-Version header of a problem response');
});
