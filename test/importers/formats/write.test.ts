/**
 * The one write path of the field's files (src/importers/formats/write.ts), with a reader double
 * (levelDouble.ts) and everything else real: the database, and what a client reads back over HTTP.
 */
import { Readable } from 'node:stream';
import t from 'tap';
import { fewsTube } from '../../../src/importers/formats/identity.js';
import { describeImport, importFormatFile } from '../../../src/importers/formats/write.js';
import { ImportRejected } from '../../../src/importers/importErrors.js';
import { formatImportWorld } from '../../helpers/formatImport.js';
import { readLevelDouble } from './levelDouble.js';

const A = fewsTube('A');
const B = fewsTube('B');
const OPTIONS = { timezone: 'Europe/Amsterdam', status: 1, datum: 'NAP' };
const FROM = '2024-01-01T00:00:00Z';
const TO = '2024-02-01T00:00:00Z';

const importText = (sql: Parameters<typeof importFormatFile>[0], text: string, name = 'levels.txt') =>
  importFormatFile(sql, Readable.from([Buffer.from(text)]), readLevelDouble, { ...OPTIONS, name });

const refusal = (error: unknown) => {
  if (!(error instanceof ImportRejected)) throw error;
  return error.report();
};

const FILE = [
  `tube ${A} WA 1 location=5.1,52.1 groundLevel=1.5 tubeTop=1.25 screenTop=-2 screenBottom=-3`,
  `tube ${B} WB 1 tubeTop=0.5`,
  `level ${A} 2024-01-01T00:00:00Z 0.25 provisional`,
  `level ${A} 2024-01-01T01:00:00+01:00 0.5 provisional`,
  'skip 3 control reading',
  `level ${A} 2024-01-02T00:00:00Z 0.75 rejected`,
  `level ${B} 2024-01-01T00:00:00Z -1.5 approved`,
].join('\n');

t.test('a file: its tubes, then its levels, read back as a client; again: nothing changes', async (t) => {
  const world = await formatImportWorld(t);
  const { sql } = world.api.db;
  const first = await importText(sql, FILE);
  t.equal(
    describeImport(first),
    '2 tubes stated; 7 points read: 1 approved, 1 provisional and 1 rejected written; 3 control readings, 1 duplicate time',
  );
  const wells = await world.wells();
  t.same(
    wells.map((w) => [w.name, w.location ?? null, w.tubes]),
    [
      [
        'WA',
        { type: 'Point', coordinates: [5.1, 52.1] },
        [
          {
            identifier: A,
            number: '1',
            unit: 'm',
            verticalDatum: 'NAP',
            groundLevel: 1.5,
            tubeTop: 1.25,
            screenTop: -2,
            screenBottom: -3,
          },
        ],
      ],
      ['WB', null, [{ identifier: B, number: '1', unit: 'm', verticalDatum: 'NAP', tubeTop: 0.5 }]],
    ],
  );
  t.equal((await world.wellsGeoJson()).features.length, 2);
  t.same(
    await world.series(A, FROM, TO),
    [
      { observedAt: '2024-01-01T00:00:00Z', value: 0.5, status: 'provisional' },
      { observedAt: '2024-01-02T00:00:00Z', value: 0.75, status: 'rejected' },
    ],
    'of two levels at one instant (an offset apart), the later line',
  );
  const before = await world.network(FROM, TO);
  const second = await importText(sql, FILE);
  t.equal(
    describeImport(second),
    '2 tubes stated; 7 points read: nothing written, 3 unchanged; 3 control readings, 1 duplicate time',
  );
  t.same((await world.network(FROM, TO, before.syncToken)).series, [], 'an empty delta');
});

t.test('a refused file leaves nothing: no tube, no level, no change in any sync delta', async (t) => {
  const world = await formatImportWorld(t);
  const { sql } = world.api.db;
  const before = await world.network(FROM, TO);
  const error = await importText(sql, `${FILE}\nrefuse value not a number`, 'bad.txt').catch(refusal);
  t.equal(error, 'bad.txt:8: double/refusal: value: not a number\n');
  t.same(await world.wells(), []);
  t.same(await sql`select from tubes union all select from wells union all select from measurements`, []);
  t.same(await sql`select from measurement_changes union all select from measurement_corrections`, []);
  t.same((await world.network(FROM, TO, before.syncToken)).series, []);
});
