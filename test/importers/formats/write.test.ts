/**
 * The one write path of the field's files (src/importers/formats/write.ts), with a reader double
 * (levelDouble.ts) and everything else real: the database, and what a client reads back over HTTP.
 */
import { PassThrough, Readable } from 'node:stream';
import t from 'tap';
import { fewsTube } from '../../../src/importers/formats/identity.js';
import type { ReaderFactory } from '../../../src/importers/formats/reader.js';
import { describeImport, importFormatFile } from '../../../src/importers/formats/write.js';
import { ImportRejected } from '../../../src/importers/importErrors.js';
import { streamInput } from '../../../src/importers/measurements/importInput.js';
import { ImportConflicted } from '../../../src/importers/measurements/measurements.js';
import { type FormatImportWorld, formatImportWorld } from '../../helpers/formatImport.js';
import { until } from '../../helpers/until.js';
import { readLevelDouble } from './levelDouble.js';

const A = fewsTube('A');
const B = fewsTube('B');
const C = fewsTube('C');
const OPTIONS = { timezone: 'Europe/Amsterdam', status: 1, datum: 'NAP' };
const FROM = '2024-01-01T00:00:00Z';
const TO = '2024-02-01T00:00:00Z';

/** Imports `text` through the double, and tells `world` discovery may have changed. */
const importer =
  (world: FormatImportWorld) =>
  async (text: string, name = 'levels.txt') => {
    try {
      return await importFormatFile(world.api.db.sql, Readable.from([Buffer.from(text)]), readLevelDouble, {
        ...OPTIONS,
        name,
      });
    } finally {
      world.wrote();
    }
  };

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
  const importText = importer(world);
  const first = await importText(FILE);
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
  const second = await importText(FILE);
  t.equal(
    describeImport(second),
    '2 tubes stated; 7 points read: nothing written, 3 unchanged; 3 control readings, 1 duplicate time',
  );
  t.same((await world.network(FROM, TO, before.syncToken)).series, [], 'an empty delta');
});

t.test('a refused file leaves nothing: no tube, no level, no change in any sync delta', async (t) => {
  const world = await formatImportWorld(t);
  const importText = importer(world);
  const { sql } = world.api.db;
  const before = await world.network(FROM, TO);
  const error = await importText(`${FILE}\nrefuse value not a number`, 'bad.txt').catch(refusal);
  t.equal(error, 'bad.txt:8: double/refusal: value: not a number\n');
  t.same(await world.wells(), []);
  t.same(await sql`select from tubes union all select from wells union all select from measurements`, []);
  t.same(await sql`select from measurement_changes union all select from measurement_corrections`, []);
  t.same((await world.network(FROM, TO, before.syncToken)).series, []);
});

t.test('repeated times: the higher priority, then the later line; counted, not refused', async (t) => {
  const world = await formatImportWorld(t);
  const importText = importer(world);
  const file = [
    `tube ${A} WA 1`,
    `level ${A} 2024-01-01T00:00:00Z 1 provisional 1`,
    `level ${A} 2024-01-01T00:00:00Z 2 approved 0`,
    `level ${A} 2024-01-01T00:00:00Z 3 rejected 1`,
    `level ${A} 2024-01-01T01:00:00Z 4 approved 2`,
    `level ${A} 2024-01-01T01:00:00Z 5 provisional 0`,
  ].join('\n');
  const expected = [
    { observedAt: '2024-01-01T00:00:00Z', value: 3, status: 'rejected' },
    { observedAt: '2024-01-01T01:00:00Z', value: 4, status: 'approved' },
  ];
  t.equal(
    describeImport(await importText(file)),
    '1 tube stated; 5 points read: 1 approved and 1 rejected written; 3 duplicate times',
  );
  t.same(await world.series(A, FROM, TO), expected);
  const before = await world.network(FROM, TO);
  t.equal(
    describeImport(await importText(file)),
    '1 tube stated; 5 points read: nothing written, 2 unchanged; 3 duplicate times',
    'again, through the upsert: the same winners',
  );
  t.same((await world.network(FROM, TO, before.syncToken)).series, []);
  t.same(await world.series(A, FROM, TO), expected);
});

t.test('a tube stated after its levels, in a later chunk: the staging path takes the file', async (t) => {
  const world = await formatImportWorld(t);
  const { sql } = world.api.db;
  const chunks = [`level ${A} 2024-01-01T00:00:00Z 1 provisional\n`, `tube ${A} WA 1\n`];
  const imported = await importFormatFile(
    sql,
    Readable.from(chunks.map((c) => Buffer.from(c))),
    readLevelDouble,
    {
      ...OPTIONS,
      name: 'late.txt',
    },
  );
  t.equal(describeImport(imported), '1 tube stated; 1 point read: 1 provisional written');
  t.same(await world.series(A, FROM, TO), [
    { observedAt: '2024-01-01T00:00:00Z', value: 1, status: 'provisional' },
  ]);
});

t.test(
  'a statement replaces only the fields it states; the registry rules hold for the result',
  async (t) => {
    const world = await formatImportWorld(t);
    const importText = importer(world);
    const { sql } = world.api.db;
    const stored = async () =>
      (await world.wells()).map((w) => ({ location: w.location ?? null, ...w.tubes[0] }));
    await importText(
      `tube ${A} WA 1 location=5,52 groundLevel=1 tubeTop=2 screenTop=-1 screenBottom=-2 unit=m`,
    );
    const whole = {
      identifier: A,
      number: '1',
      unit: 'm',
      verticalDatum: 'NAP',
      groundLevel: 1,
      tubeTop: 2,
      screenTop: -1,
      screenBottom: -2,
    };
    const located = { location: { type: 'Point', coordinates: [5, 52] } };
    t.same(await stored(), [{ ...located, ...whole }]);
    await importText(`tube ${A} WA 1 tubeTop=3`);
    t.same(await stored(), [{ ...located, ...whole, tubeTop: 3 }], 'only tubeTop');
    await importText(`tube ${A} WA 1 groundLevel=null verticalDatum=MSL`);
    const { groundLevel: _, ...unknownGround } = whole;
    t.same(
      await stored(),
      [{ ...located, ...unknownGround, tubeTop: 3, verticalDatum: 'MSL' }],
      'null: unknown',
    );
    await importText(`tube ${A} WA 1 location=null`);
    t.same(await stored(), [{ location: null, ...unknownGround, tubeTop: 3, verticalDatum: 'MSL' }]);

    const refused = (text: string) => importText(text, 'tube.txt').catch(refusal);
    t.equal(
      await refused(
        `level ${A} 2024-01-01T00:00:00Z 1 provisional\ntube ${A} WA 1 screenTop=5 screenBottom=4`,
      ),
      'tube.txt:2: tubeTop: must not be below screenTop (5)\n',
      'checked against the stored tube top',
    );
    t.equal(
      await refused(`tube ${A} WA 1 screenTop=null`),
      'tube.txt:1: screenBottom: is given without screenTop: give both or neither\n',
    );
    t.equal(
      await refused(`tube ${A} WA 1 location=181,52`),
      'tube.txt:1: longitude: 181 is not within [-180, 180]\n',
    );
    t.same(
      await stored(),
      [{ location: null, ...unknownGround, tubeTop: 3, verticalDatum: 'MSL' }],
      'as it was',
    );
    t.same(await sql`select from measurements`, [], 'no level of a refused file');
  },
);

t.test(
  'a level of a tube the registry lacks, and a tube number another tube holds, refuse the file',
  async (t) => {
    const world = await formatImportWorld(t);
    const importText = importer(world);
    const { sql } = world.api.db;
    t.equal(
      await importText(`tube ${A} WA 1\nlevel ${B} 2024-01-01T00:00:00Z 1 provisional`, 'gld.txt').catch(
        refusal,
      ),
      `gld.txt:2: tube: no tube ${B} is registered (a level of it from this line on): import the file that describes it first (gwapi import bro-gmw, or gwapi import registry)\n`,
    );
    const levels = (tube: string, from: number, n: number) =>
      Array.from({ length: n }, (_, i) => `level ${tube} 2024-01-0${from + i}T00:00:00Z 1 provisional`);
    t.equal(
      await importText(
        [...levels(B, 1, 3), ...levels(C, 1, 1), ...levels(B, 4, 2)].join('\n'),
        'gld.txt',
      ).catch(refusal),
      `gld.txt:1: tube: no tube ${B} is registered (5 levels of it from this line on): import the file that describes it first (gwapi import bro-gmw, or gwapi import registry)\n` +
        `gld.txt:4: tube: no tube ${C} is registered (a level of it from this line on): import the file that describes it first (gwapi import bro-gmw, or gwapi import registry)\n`,
      'one error per tube, at its first level, with how many it has',
    );
    t.same(await sql`select from tubes`, [], 'the tube of the refused file is not written either');
    await importText(`tube ${A} WA 1`);
    t.equal(
      await importText(`tube ${B} WA 1`, 'clash.txt').catch(refusal),
      `clash.txt:1: number: well "WA" already has tube number "1" with identifier ${A}\n`,
    );
  },
);

t.test('a file whose points are all skipped is no error', async (t) => {
  const world = await formatImportWorld(t);
  const importText = importer(world);
  const imported = await importText('skip 4 control reading\nskip 1 missing value');
  t.equal(describeImport(imported), '5 points read: nothing written; 4 control readings, 1 missing value');
});

for (const stored of [true, false]) {
  t.test(
    `two files stating ${stored ? 'a stored tube' : 'a new tube'} at once: the later waits, and keeps what the first stated`,
    async (t) => {
      const world = await formatImportWorld(t);
      const { sql } = world.api.db;
      const importText = importer(world);
      // A new tube of a stored well: the files meet at the tube alone.
      await importText(stored ? `tube ${A} WA 1 groundLevel=1 tubeTop=2` : `tube ${B} WA 2`);
      // The first file states tubeTop, then holds its transaction open until its stream ends.
      const held = new PassThrough();
      const first = importFormatFile(sql, held, readLevelDouble, { ...OPTIONS, name: 'first.txt' });
      held.write(`tube ${A} WA 1 tubeTop=3\n`);
      await until(
        'the first file has written its tube, and waits for the rest of its stream',
        async () =>
          (
            await sql`select count(*)::int as n from pg_stat_activity
                    where state = 'idle in transaction' and query like 'drop table registry_input%'`
          )[0]!.n,
        (n) => n === 1,
      );
      const second = importText(`tube ${A} WA 1 groundLevel=5`);
      await until(
        'the second file waits for the tube',
        async () =>
          (await sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'`)[0]!.n,
        (n) => n === 1,
      );
      held.end();
      await first;
      await second;
      const [tube] = await sql`select ground_level, tube_top from tubes where identifier = ${A}`;
      t.same(tube, { ground_level: 5, tube_top: 3 }, 'neither statement lost');
    },
  );
}

t.test(
  'a reader that fails otherwise, or passes a level no reader may, refuses the file alone',
  async (t) => {
    const world = await formatImportWorld(t);
    const failing: ReaderFactory = (file, sink, options) => {
      const reader = readLevelDouble(file, sink, options);
      return {
        write(chunk) {
          reader.write(chunk);
          if (reader.lines >= 2) throw new RangeError('the reader broke');
        },
        end: () => reader.end(),
        get lines() {
          return reader.lines;
        },
      };
    };
    const text = `tube ${A} WA 1\nlevel ${A} 2024-01-01T00:00:00Z 1 provisional\n`;
    const error = await importFormatFile(world.api.db.sql, Readable.from([Buffer.from(text)]), failing, {
      ...OPTIONS,
      name: 'broken.txt',
    }).catch(refusal);
    t.equal(error, 'broken.txt:2: file: cannot be read: the reader broke\n');
    const importText = importer(world);
    t.equal(
      await importText(`tube ${A} WA 1\nlevel ${A} 2024-01-01T00:00:00Z NaN provisional`, 'nan.txt').catch(
        refusal,
      ),
      'nan.txt:2: value: NaN is not a finite number\n',
    );
    t.same(await world.api.db.sql`select from tubes union all select from measurements`, []);
  },
);

/**
 * Two files stating tubes A and B in opposite orders, each tube in a chunk of its own, the first file
 * forced to take A before the second has: a third session holds A until both wait, the first for A, the
 * second (which has B) for A too. Once A is let go the first takes it and waits for B: a deadlock,
 * which PostgreSQL breaks by failing one of them. `kept`: how much of each stream is kept for a second
 * reading (streamInput).
 */
async function deadlockingImports(world: FormatImportWorld, kept?: number) {
  const { sql } = world.api.db;
  const file = (first: string, second: string, day: string) =>
    [first, second].map((tube) =>
      Buffer.from(
        `tube ${tube} W${tube === A ? 'A' : 'B'} 1\nlevel ${tube} 2024-01-${day}T00:00:00Z 1 provisional\n`,
      ),
    );
  const importChunks = (chunks: Buffer[], name: string) => {
    const input = streamInput(Readable.from(chunks), kept);
    return importFormatFile(sql, input, readLevelDouble, { ...OPTIONS, name });
  };
  const lockWaits = async () =>
    (
      await sql`select count(*)::int as n from pg_stat_activity
                where datname = current_database() and wait_event_type = 'Lock'`
    )[0]!.n;
  const holder = await sql.reserve();
  try {
    await holder`begin`;
    await holder`select from tubes where identifier = ${A} for no key update`;
    const first = importChunks(file(A, B, '01'), 'first.txt');
    first.catch(() => {});
    await until('the first file waits for A', lockWaits, (n) => n === 1);
    const second = importChunks(file(B, A, '02'), 'second.txt');
    second.catch(() => {});
    await until('the second file holds B and waits for A too', lockWaits, (n) => n === 2);
    await holder`commit`;
    return await Promise.allSettled([first, second]);
  } finally {
    holder.release();
    world.wrote();
  }
}

t.test('two files deadlocking on their tubes: the one PostgreSQL fails is imported again', async (t) => {
  const world = await formatImportWorld(t);
  const importText = importer(world);
  await importText(`tube ${A} WA 1\ntube ${B} WB 1`);
  const before = await world.network(FROM, TO);
  const outcomes = await deadlockingImports(world);
  t.same(
    outcomes.map((outcome) =>
      outcome.status === 'fulfilled' ? describeImport(outcome.value) : outcome.reason,
    ),
    [
      '2 tubes stated; 2 points read: 2 provisional written',
      '2 tubes stated; 2 points read: 2 provisional written',
    ],
    'both files imported',
  );
  const levels = [
    { observedAt: '2024-01-01T00:00:00Z', value: 1, status: 'provisional' },
    { observedAt: '2024-01-02T00:00:00Z', value: 1, status: 'provisional' },
  ];
  t.same(await world.series(A, FROM, TO), levels, 'each level of A once');
  t.same(await world.series(B, FROM, TO), levels, 'each level of B once');
  const delta = await world.network(FROM, TO, before.syncToken);
  t.same(
    delta.series.map((s) => [s.tubeIdentifier, s.measurements.map((m) => m.observedAt)]).sort(),
    [
      [A, levels.map((l) => l.observedAt)],
      [B, levels.map((l) => l.observedAt)],
    ].sort(),
    'the sync delta holds both files’ levels',
  );
});

t.test('a stream read past what is kept is not imported again: the error says so', async (t) => {
  const world = await formatImportWorld(t);
  await importer(world)(`tube ${A} WA 1\ntube ${B} WB 1`);
  // Nothing kept: the staging path reads each stream on, past any second reading.
  const outcomes = await deadlockingImports(world, 1);
  const failed = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
  t.equal(outcomes.length - failed.length, 1, 'the other file is imported');
  t.match(failed, [
    {
      constructor: ImportConflicted,
      message:
        /^(first|second)\.txt: not imported: it deadlocked with another import writing the same tubes and, a stream read past what is kept, could not be read again to retry; nothing of it was written: import it again$/,
    },
  ]);
  const failedName = (failed[0] as Error).message.split(':')[0];
  const day = failedName === 'first.txt' ? '02' : '01';
  const kept = [{ observedAt: `2024-01-${day}T00:00:00Z`, value: 1, status: 'provisional' }];
  t.same(await world.series(A, FROM, TO), kept, 'nothing of the failed file');
  t.same(await world.series(B, FROM, TO), kept);
});
