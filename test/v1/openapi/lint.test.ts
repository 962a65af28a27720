/**
 * The document the service serves lints clean under the two standard linters, each with its ruleset
 * file at the repository root (.spectral.yaml, redocly.yaml), in both renderings (3.1 at
 * /v1/openapi.json, 3.0 at /v1/ogc/api, each linted by the rules of its version): each CLI fetches it
 * over HTTP from a running server, as a person would lint it. Every problem found is printed in the failure.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { startApi } from '../../helpers/api.js';
import { get } from '../../helpers/http.js';
import { runPackageBin } from '../../helpers/packageBin.js';

const DOCUMENT = '/v1/openapi.json';
const RENDERINGS = { 'OpenAPI 3.1': DOCUMENT, 'OpenAPI 3.0': '/v1/ogc/api' };

interface Linted {
  code: number | null;
  /** One line per problem: severity, rule, where, message. */
  problems: string[];
}

/** A linter's report: JSON on standard output, or whatever it said instead as the error. */
function report<T>(output: { stdout: string; stderr: string }): T {
  try {
    return JSON.parse(output.stdout);
  } catch {
    throw new Error(`no JSON report: ${output.stdout}${output.stderr}`);
  }
}

const SPECTRAL_SEVERITIES = ['error', 'warning', 'info', 'hint'];

async function spectral(target: string): Promise<Linted> {
  const output = await runPackageBin('@stoplight/spectral-cli', 'spectral', [
    ...['lint', target, '--ruleset', '.spectral.yaml', '--format', 'json'],
    // Every result fails the run, a hint too.
    ...['--fail-severity', 'hint', '--quiet'],
  ]);
  const results = report<{ code: string; severity: number; path: string[]; message: string }[]>(output);
  return {
    code: output.code,
    problems: results.map(
      (r) => `${SPECTRAL_SEVERITIES[r.severity]} ${r.code} at ${r.path.join('.')}: ${r.message}`,
    ),
  };
}

async function redocly(target: string): Promise<Linted> {
  const output = await runPackageBin(
    '@redocly/cli',
    'redocly',
    ['lint', target, '--config', 'redocly.yaml', '--format', 'json'],
    { REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  );
  const { problems } = report<{
    problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
  }>(output);
  return {
    code: output.code,
    problems: problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`),
  };
}

const LINTERS = { 'Spectral (spectral:oas)': spectral, 'Redocly (recommended)': redocly };

t.test('the served OpenAPI document lints clean', async (t) => {
  const api = await startApi(t);
  const fetches = (path: string) =>
    api.logLines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request' && line.url === path)
      .length;

  for (const [rendering, path] of Object.entries(RENDERINGS)) {
    for (const [name, lint] of Object.entries(LINTERS)) {
      t.test(`${rendering}: ${name}`, async (t) => {
        const before = fetches(path);
        const { code, problems } = await lint(api.base + path);
        t.ok(fetches(path) > before, 'the linter read the document from the server');
        t.same(problems, [], 'no error, no warning, no hint');
        t.equal(code, 0);
      });
    }
  }

  // The same linters and rulesets do fail a flawed document: here, one operation that is only a 405.
  t.test('and the same linters flag a phantom operation', async (t) => {
    const document = JSON.parse((await get(api.base, DOCUMENT)).body);
    document.paths['/openapi.json'].post = { responses: { '405': { description: 'Not allowed.' } } };
    const flawed = join(t.testdir(), 'flawed.json');
    await writeFile(flawed, JSON.stringify(document));
    for (const [name, lint] of Object.entries(LINTERS)) {
      const { code, problems } = await lint(flawed);
      t.match(problems.join('\n'), /operation-operationId at .*post/, `${name}: names the operation`);
      t.not(code, 0, `${name}: fails`);
    }
  });
});
