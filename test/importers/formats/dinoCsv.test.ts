import t, { type Test } from 'tap';
import { statusCode } from '../../../src/domain/status.js';
import { dinoReader } from '../../../src/importers/formats/dino/dinoCsv.js';
import { approximateWgs84, type Call, fixture, metresBetween, pythonUuid5, read } from './readerSink.js';

const [B32C0211, B44F0310, B27D0188] = pythonUuid5(
  'urn:dino:B32C0211:001',
  'urn:dino:B44F0310:001',
  'urn:dino:B27D0188:002',
) as [string, string, string];

const PERIODS = fixture('dino/B32C0211001_1.csv');

/** The tube call's location checked against the approximation, then left out of the comparison. */
function withoutLocation(t: Test, calls: Call[], rd: [number, number] | null): Call[] {
  return calls.map((call) => {
    if (!('tube' in call)) return call;
    const { location, ...tube } = call.tube;
    if (rd === null) t.equal(location, null, 'no location');
    else
      t.ok(
        metresBetween(location!, approximateWgs84(...rd)) < 1.5,
        'the location is within a metre or so of RD',
      );
    return { ...call, tube };
  });
}

const level = (line: number, tube: string, instant: string, value: number, status = 'provisional'): Call => ({
  level: [line, tube, instant, value, status, 0],
});
const skip = (reason: string): Call => ({ skip: reason, count: 1 });
/** A tube call (its location aside): elevations as ground level, tube top, screen top and bottom. */
const tube = (
  line: number,
  identifier: string,
  wellName: string,
  number: string,
  elevations: (number | null)[],
) => {
  const [groundLevel, tubeTop, screenTop, screenBottom] = elevations;
  const stated = { unit: 'm', verticalDatum: 'NAP', groundLevel, tubeTop, screenTop, screenBottom };
  return { tube: { identifier, wellName, number, ...stated }, line } as Call;
};

t.test(
  "the metadata period with the latest Startdatum is the tube's; rows without NAP skipped",
  async (t) => {
    const expected: Call[] = [
      tube(14, B32C0211, 'B32C0211', '001', [-1.48, -0.91, -3.12, -4.12]),
      level(19, B32C0211, '1998-01-13T23:00:00Z', -2.1),
      level(20, B32C0211, '1998-01-27T23:00:00Z', -2.03),
      skip('no NAP level'),
      level(22, B32C0211, '2019-07-13T22:00:00Z', -1.92),
      level(23, B32C0211, '2024-02-27T23:00:00Z', -1.9),
      level(24, B32C0211, '2024-02-27T23:00:00Z', -1.88),
    ];
    for (const chunkSize of [1, 13, 65_536]) {
      t.same(
        withoutLocation(t, read(dinoReader, PERIODS, {}, chunkSize), [136_420, 487_310]),
        expected,
        `${chunkSize}`,
      );
    }
    const utc = read(dinoReader, PERIODS, { timezone: 'UTC', status: statusCode('approved') });
    t.same(
      utc.filter((call) => 'level' in call).map((call) => ('level' in call ? call.level.slice(2, 5) : [])),
      [
        ['1998-01-14T00:00:00Z', -2.1, 'approved'],
        ['1998-01-28T00:00:00Z', -2.03, 'approved'],
        ['2019-07-14T00:00:00Z', -1.92, 'approved'],
        ['2024-02-28T00:00:00Z', -1.9, 'approved'],
        ['2024-02-28T00:00:00Z', -1.88, 'approved'],
      ],
      '--timezone and --status',
    );
    t.throws(() => read(dinoReader, PERIODS, { timezone: 'Europe/Nowhere' }), {
      name: 'UserError',
      message: /--timezone: "Europe\/Nowhere" is not a time zone/,
    });
  },
);

t.test(
  'the quoted layout, t.o.v without its dot; a screen with one bound is left out, and said so',
  async (t) => {
    const calls = read(dinoReader, fixture('dino/B44F0310001.csv'), {}, 5);
    t.same(withoutLocation(t, calls, [203_480, 427_150]), [
      tube(11, B44F0310, 'B44F0310', '001', [10.42, 10.98, null, null]),
      { note: 'screen left out (one bound only)' },
      level(14, B44F0310, '1987-06-11T22:00:00Z', 9.38),
      level(15, B44F0310, '1987-06-25T22:00:00Z', 9.27),
      level(16, B44F0310, '2023-11-13T23:00:00Z', 9.46),
    ]);
  },
);

t.test('a file without a metadata row: a tube with no location and no elevations', async (t) => {
  const calls = read(dinoReader, fixture('dino/B27D0188002_1.csv'));
  t.same(withoutLocation(t, calls, null), [
    tube(16, B27D0188, 'B27D0188', '002', [null, null, null, null]),
    skip('no NAP level'),
    level(17, B27D0188, '2002-03-13T23:00:00Z', 12.13),
    level(18, B27D0188, '2002-03-29T23:00:00Z', 12.09),
  ]);
  const none =
    '"Periode aangevraagd:","01-01-1800","tot:","20-03-2024",,,,,,,,,\n"Datum:","20-03-2024",,,,,,,,,,,\n' +
    ',,,,,,,,,,,,\n"Van deze put zijn geen standen opgenomen in de DINO-database",,,,,,,,,,,,\n';
  t.same(read(dinoReader, none), [], 'a well DINO has no levels of: nothing to import, and no error');
});

t.test('a refused file: its line and field, and why', async (t) => {
  const periods = PERIODS.toString();
  const refusals: [string, string | Buffer, object][] = [
    ['empty', '', { place: { line: 1 }, message: /ends before its levels section/ }],
    [
      'cut off in a row',
      periods.slice(0, periods.indexOf(',-192')),
      {
        place: { line: 22 },
        field: 'row',
        message: /has 5 fields where the header names 8 \(is the file cut off\?\)/,
      },
    ],
    [
      'cut off before the levels',
      periods.slice(0, periods.indexOf('\n\n\nLocatie')),
      { place: { line: 15 }, message: /the file ends before its levels section/ },
    ],
    [
      "another format: BRO's objectsAsCsv",
      fixture('bro/GLD000000012893_objectsAsCsv.csv'),
      {
        place: { line: 1 },
        field: 'row',
        message: /not a DINO groundwater-level file .*found "BRO-ID,bronhouder/,
      },
    ],
    [
      "DINO's older layout",
      'Titel: \nReferentie: Maaiveld (MV)\n\n\nLOCATIE,FILTERNUMMER,EXTERNE AANDUIDING,X-COORDINAAT\n',
      { place: { line: 5 }, field: 'LOCATIE', message: /older layout \(its _0 file\)/ },
    ],
    [
      'a value that is not a number',
      periods.replace(',-192,', ',n.b.,'),
      { place: { line: 22 }, field: 'Stand (cm t.o.v. NAP)', message: /"n\.b\.": not a decimal number/ },
    ],
    [
      'an elevation that is not a number',
      periods.replace(',-91,', ',?,'),
      { place: { line: 14 }, field: 'Meetpunt (cm t.o.v. NAP)', message: /"\?": not a decimal number/ },
    ],
    [
      'a time without a date',
      periods.replace('14-07-2019', '12:00'),
      { place: { line: 22 }, field: 'Peildatum', message: /"12:00": not a date \(DD-MM-YYYY/ },
    ],
    [
      'a date that does not exist',
      periods.replace('14-07-2019', '31-06-2019'),
      { place: { line: 22 }, field: 'Peildatum', message: /"31-06-2019": not a date/ },
    ],
    [
      'levels in metres',
      periods.replace('Stand (cm t.o.v. NAP)', 'Stand (m t.o.v. NAP)'),
      { place: { line: 18 }, field: 'Stand (cm t.o.v. NAP)', message: /unit "m": DINO states levels in cm/ },
    ],
    [
      'a levels section without its NAP column',
      periods.replace(',Stand (cm t.o.v. NAP),', ',Stand (cm),'),
      { place: { line: 18 }, field: 'header', message: /lacks the columns Stand \(cm t\.o\.v\. NAP\)/ },
    ],
    [
      'another section where the levels belong',
      periods.replace('Locatie,Filternummer,Peildatum', 'Locatie,Filternummer,Datum'),
      { place: { line: 18 }, field: 'row', message: /expected the levels section/ },
    ],
  ];
  for (const [name, bytes, refusal] of refusals) {
    t.throws(() => read(dinoReader, bytes), { name: 'FileRefused', ...refusal }, name);
  }
});
