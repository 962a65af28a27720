/**
 * A typed client generated from the served document works: openapi-typescript writes the types,
 * strict tsc (the repository's settings) compiles them with generatedClient/client.ts, an openapi-fetch
 * program, and that program reads a real server: discovery (whole, and in a box), a series, a 400 with
 * its `errors`, the network endpoint with `tubes`, then again with `changedSince` (its sync token), and
 * latest with `status` and `include`. The client of docs/clients.md, as its code block stands there, compiles
 * with the same types and keeps each body's type exact: discovery's array, the series' measurements, and
 * the problem of a refusal.
 */
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import t from 'tap';
import { addKey, addMeasurements, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { codeBlocks } from '../../helpers/clientGuide.js';
import { get } from '../../helpers/http.js';
import { refreshLatest } from '../../helpers/latest.js';
import { runNodeScript, typeCheckFolder } from '../../helpers/packageBin.js';

t.test('a client generated from the served document', async (t) => {
  const api = await startApi(t);
  const { sql } = api.db;
  const [tube] = await addWell(sql, 'Veenhof 2', [{ number: '1' }]);
  await sql`update wells set longitude = 5.38763, latitude = 52.15616 where name = 'Veenhof 2'`;
  await addMeasurements(sql, tube!.id, [
    ['2024-03-01T00:00:00Z', '-1.23'],
    ['2024-03-01T00:15:00Z', '-1.24'],
  ]);
  await refreshLatest(sql);
  const reader = await addKey(sql, { tubeIds: [tube!.id] });

  const served = await get(api.base, '/v1/openapi.json');
  const types = astToString(await openapiTS(served.body));
  // Inside the repository (tap's fixture folder, ignored by git), so that modules resolve from its
  // node_modules, as they would in a client's project.
  const directory = t.testdir();
  await writeFile(join(directory, 'api.ts'), types);
  await copyFile(join(import.meta.dirname, 'generatedClient', 'client.ts'), join(directory, 'client.ts'));
  await writeFile(join(directory, 'guide.ts'), guideClient());

  t.test('has only the GET of each path', async (t) => {
    t.match(types, /"\/groundwater-monitoring-wells": \{/);
    t.match(types, /get: operations\["listWells"\];/);
    const writes = types.match(/^\s*(put|post|delete|options|head|patch|trace)\??: (?!never;).*$/gm);
    t.same(writes ?? [], [], 'every other method is never');
  });

  t.test('compiles with strict tsc, the guide’s client too', async (t) => {
    const { code, reported } = await typeCheckFolder(directory);
    t.same(reported, [], 'tsc reports nothing');
    t.equal(code, 0);
  });

  t.test('reads discovery, a series, a typed 400 and the network endpoint', async (t) => {
    // Node strips the types itself: what runs is the program tsc checked.
    const { code, stdout, stderr } = await runNodeScript(
      join(directory, 'client.ts'),
      [api.base, '2024-03-01T01:00:00+01:00', '2024-03-01T02:00:00+01:00'],
      { GWAPI_KEY: reader.key },
    );
    t.equal(code, 0, stderr);
    t.same(JSON.parse(stdout), {
      wells: [
        {
          name: 'Veenhof 2',
          tubes: [{ identifier: tube!.identifier, number: '1', unit: 'm', verticalDatum: 'NAP' }],
          location: { type: 'Point', coordinates: [5.38763, 52.15616] },
        },
      ],
      boxed: { wells: 1, coordinates: [5.38763, 52.15616] },
      series: { unit: 'm', from: '2024-03-01T00:00:00Z', values: [-1.23, -1.24] },
      refused: { status: 400, title: 'Bad Request', errors: { to: ['must be later than from'] } },
      network: { tubes: [tube!.identifier], values: [[-1.23, -1.24]], tokenInHeader: true, changes: [] },
      latest: [
        {
          tubeIdentifier: tube!.identifier,
          observedAt: '2024-03-01T00:15:00Z',
          value: -1.24,
          status: 'provisional',
        },
      ],
    });
  });
});

/**
 * The guide's typed client, its `BASE` and `KEY` given, then using what it read as a reader would: each
 * line compiles only when that body's type is the JSON's own, not a union with GeoJSON's.
 */
function guideClient(): string {
  const blocks = codeBlocks('ts').filter((code) => code.includes('createClient'));
  if (blocks.length !== 1) throw new Error(`${blocks.length} typed clients in docs/clients.md`);
  return [
    'const BASE = process.argv[2]!;',
    'const KEY = process.env.GWAPI_KEY!;',
    blocks[0]!,
    'export const wells: number | undefined = data?.length;',
    'export const problem: string | undefined = error?.title;',
    'export const identifier: string | undefined = data?.[0]?.tubes[0]?.identifier;',
    "const series = await client.GET('/groundwater-monitoring-tubes/{tubeIdentifier}/measurements', {",
    "  params: { path: { tubeIdentifier: identifier! }, query: { from: '2024-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z' } },",
    '});',
    'export const values: number[] | undefined = series.data?.measurements.map((measurement) => measurement.value);',
    'export const errors: Record<string, string[]> | undefined = series.error?.errors;',
    '',
  ].join('\n');
}
