import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { formatInstant, type Instant } from '../../../../src/domain/datetime.js';
import { STATUSES } from '../../../../src/domain/status.js';
import { readFews } from '../../../../src/importers/formats/fews/fewsReader.js';
import {
  FileRefused,
  type FormatOptions,
  type LevelSink,
  type StatedTube,
} from '../../../../src/importers/formats/reader.js';
import { metresBetween, pythonUuid5 } from '../readerSink.js';
import { FEWS_LUNETTEN, fixture, LUNETTEN_LEVELS, VLEUTEN_LEVELS } from './fixtures.js';

const bytesOf = (name: string) => readFileSync(fixture(name));

const OPTIONS: FormatOptions = { timezone: 'Europe/Amsterdam', status: 1, datum: 'NAP' };

interface Read {
  tubes: StatedTube[];
  levels: { line: number; tube: string; observedAt: string; value: number; status: string }[];
  skipped: Record<string, number>;
}

/** Reads `bytes` in chunks of `chunkSize` into a sink that keeps every call. */
function read(bytes: Buffer, options: Partial<FormatOptions> = {}, chunkSize = 4096): Read {
  const result: Read = { tubes: [], levels: [], skipped: {} };
  const sink: LevelSink = {
    tube: (tube) => result.tubes.push(tube),
    level: (line, identifier, instant: Instant, value, status, priority) => {
      if (priority !== 0) throw new Error('FEWS has one review level');
      result.levels.push({
        line,
        tube: identifier,
        observedAt: formatInstant(instant),
        value,
        status: STATUSES[status]!,
      });
    },
    skipPoints: (reason, count = 1) => {
      result.skipped[reason] = (result.skipped[reason] ?? 0) + count;
    },
  };
  const reader = readFews('file.xml', sink, { ...OPTIONS, ...options });
  for (let at = 0; at < bytes.length; at += chunkSize) reader.write(bytes.subarray(at, at + chunkSize));
  reader.end();
  return result;
}

function refusal(bytes: Buffer, options: Partial<FormatOptions> = {}): FileRefused {
  try {
    read(bytes, options);
  } catch (error) {
    if (error instanceof FileRefused) return error;
    throw error;
  }
  throw new Error('the file was read without a refusal');
}

t.test('a file of groundwater levels in mNAP: tubes, levels, statuses and skips', async (t) => {
  const lunetten = pythonUuid5('urn:fews:PP-Lunetten-101')[0]!;
  const vleuten = pythonUuid5('urn:fews:Vleuten peilbuis 2')[0]!;
  const { tubes, levels, skipped } = read(bytesOf('levels-mnap.xml'));

  t.same(
    tubes.map(({ place, location, ...tube }) => tube),
    [
      { identifier: lunetten, wellName: 'PP-Lunetten-101', number: '1', unit: 'm', verticalDatum: 'NAP' },
      { identifier: vleuten, wellName: 'Vleuten peilbuis 2', number: '1', unit: 'm', verticalDatum: 'NAP' },
    ],
    'one tube per location, named by its locationId, tube 1, metres relative to NAP',
  );
  t.ok(
    metresBetween(tubes[0]!.location!, FEWS_LUNETTEN) < 1,
    'RD x/y: within 1 m of where FEWS puts the point',
  );
  t.same(
    tubes[1]!.location,
    { latitude: 52.104488, longitude: 5.185924 },
    'lat/lon when the header gives them',
  );
  t.same(tubes[0]!.place, { line: 20, path: 'TimeSeries/series[1]' }, 'a tube is placed at its header');

  t.same(
    levels.filter((level) => level.tube === lunetten).map(({ line, tube, ...level }) => level),
    LUNETTEN_LEVELS,
    'flags 0-5 provisional, 6-8 rejected, no flag provisional; times at <timeZone> 1.0 in UTC; 15 digits',
  );
  t.same(
    levels.filter((level) => level.tube === vleuten).map(({ line, tube, ...level }) => level),
    VLEUTEN_LEVELS,
    "'m NAP' and 'm+NAP' are metres relative to NAP; both parameters of one location go to its tube",
  );
  t.equal(levels[0]!.line, 21, 'each level is placed at its line');
  t.same(
    skipped,
    {
      'flag 9 (missing) value': 1,
      'missing value': 3,
      'mm value: locationId PP-Lunetten-101, parameterId P.meting': 3,
    },
    'flag 9 skipped; missVal (as a number: -999 too) and NaN skipped whatever the flag; mm refused by name',
  );
});

t.test('--parameter chooses the series; the others are counted', async (t) => {
  const { levels, skipped } = read(bytesOf('levels-mnap.xml'), { parameters: ['GW.meting'] });
  t.equal(levels.length, 12, 'the GW.meting series of both locations');
  t.notOk(
    levels.some((level) => level.value === 1.017),
    'not the GW.handmeting series',
  );
  t.same(skipped, { 'flag 9 (missing) value': 1, 'missing value': 3, 'unselected-parameter value': 4 });

  const refused = refusal(bytesOf('levels-mnap.xml'), { parameters: ['GW.meting.typo'] });
  t.match(refused.reason, /no series of the parameters selected \(GW\.meting\.typo\)/);
});

t.test('plain m takes --datum; x/y outside RD state no location; any chunking', async (t) => {
  const bytes = bytesOf('levels-m.xml');
  const whole = read(bytes, { datum: 'MSL' });
  t.same(
    whole.tubes.map(({ place, ...tube }) => tube),
    [
      {
        identifier: pythonUuid5('urn:fews:PP-Zeeën-3')[0]!,
        wellName: 'PP-Zeeën-3',
        number: '1',
        unit: 'm',
        verticalDatum: 'MSL',
      },
    ],
    'a geoDatum other than RD: x/y are not read, the location is left as it is',
  );
  t.same(
    whole.levels.map(({ observedAt, value, status }) => [observedAt, value, status]),
    [
      ['2024-01-01T01:30:00Z', -1.25, 'provisional'],
      ['2024-01-02T01:30:00Z', -1.5, 'rejected'],
    ],
    '<timeZone>-5.5</timeZone>: five and a half hours west of UTC',
  );
  for (const chunkSize of [1, 3, 7]) {
    t.same(read(bytes, { datum: 'MSL' }, chunkSize), whole, `the same in chunks of ${chunkSize} bytes`);
  }
  t.equal(read(bytes).tubes[0]!.verticalDatum, 'NAP', 'the default datum');
});

/** What reading `bytes` in chunks of `chunkSize` gives, or the refusal it ends in. */
function outcome(bytes: Buffer, chunkSize: number): Read | FileRefused {
  try {
    return read(bytes, {}, chunkSize);
  } catch (error) {
    if (error instanceof FileRefused) return error;
    throw error;
  }
}

t.test(
  'read whole at once (its events without saxes) or a byte at a time (all by saxes), the same',
  async (t) => {
    for (const name of readdirSync(fixture('.')).filter((file) => file.endsWith('.xml'))) {
      t.same(outcome(bytesOf(name), 1 << 20), outcome(bytesOf(name), 1), name);
    }
    const levels = bytesOf('levels-mnap.xml').toString();
    const event = '<event date="2024-01-15" time="09:00:00" value="-0.414" flag="0"/>';
    const withoutLines = (read: Read) => read.levels.map(({ line: _, ...level }) => level);
    const commented = levels.replace(event, `<!-- ${event.replace('-0.414', '9.999')} -->${event}`);
    t.same(
      withoutLines(read(Buffer.from(commented), {}, 1 << 20)),
      withoutLines(read(Buffer.from(levels))),
      'an event in a comment is no event',
    );
    const reordered = levels.replace(
      event,
      '<event\n  flag = "0" comment="" value="-0.414"\n  time="09:00:00" date="2024-01-15" />',
    );
    t.same(
      outcome(Buffer.from(reordered), 1 << 20),
      outcome(Buffer.from(reordered), 1),
      'attributes in any order, over lines',
    );
    t.same(
      withoutLines(read(Buffer.from(reordered), {}, 1 << 20)),
      withoutLines(read(Buffer.from(levels))),
      'attributes in any order read as in the usual one',
    );
    for (const [odd, what] of [
      [event.replace('flag="0"', 'flag="0" flag="1"'), 'a repeated attribute'],
      [event.replace('value="-0.414"', 'value="-0,414"'), 'a value that is no number'],
      [event.replace('time="09:00:00"', 'time="24:00:00"'), 'an hour that does not exist'],
      [event.replace('"2024-01-15"', '"2024-01-15" \u00a0'), 'a space XML does not know'],
      [event.replace('-0.414', '-0.4&#49;4'), 'a character reference'],
      [event.replace('flag="0"', "flag='0'"), 'single quotes'],
      [event.replace('flag="0"', 'flag="0" comment="\u0001"'), 'a character XML refuses'],
    ]) {
      const bytes = Buffer.from(levels.replace(event, odd!));
      t.same(outcome(bytes, 1 << 20), outcome(bytes, 1), `${what}: read or refused alike`);
    }
    const inOther = Buffer.from(
      levels.replace('</header>', `</header><other>${event.replace('09:00', '08:30')}</other>`),
    );
    t.same(outcome(inOther, 1 << 20), outcome(inOther, 1), 'an event in an element of a series is no event');
  },
);

t.test('a file none of whose series is in metres is refused, naming them', async (t) => {
  const refused = refusal(bytesOf('rainfall.xml'));
  t.equal(refused.field, 'series');
  t.equal(
    refused.reason,
    'no series in metres (m, mNAP): locationId KNMI-260, parameterId P.radar.h (in mm); ' +
      'locationId PP-Lunetten-101, parameterId GW.meting.cm (in cm)',
  );
  t.same(refused.place, { line: 33, path: 'TimeSeries' }, 'placed at the end of the file');
});

t.test('bad files: one refusal with its line and element path', async (t) => {
  const cases: [string, { line: number; path: string | undefined; field: string; reason: RegExp }][] = [
    [
      'truncated.xml',
      {
        line: 25,
        path: 'TimeSeries/series[1]',
        field: 'XML',
        reason: /^unclosed tag: series: the file ends before it closes \(truncated\?\)$/,
      },
    ],
    [
      'not-a-number.xml',
      {
        line: 22,
        path: 'TimeSeries/series[1]/event[2]',
        field: 'value',
        reason: /^"-0,412" is not a number$/,
      },
    ],
    [
      'time-without-date.xml',
      { line: 23, path: 'TimeSeries/series[1]/event[3]', field: 'date', reason: /^the event has no date$/ },
    ],
    [
      'locations.xml',
      { line: 2, path: 'Locations', field: 'Locations', reason: /root element is Locations, not TimeSeries/ },
    ],
    [
      'measurements.csv',
      {
        line: 1,
        path: undefined,
        field: 'XML',
        reason:
          /^not XML: the file starts with "tubeIdentifier,observedAt,value", not "<": `gwapi import fews` reads Delft-FEWS PI-XML$/,
      },
    ],
  ];
  for (const [name, expected] of cases) {
    const refused = refusal(bytesOf(name));
    t.same(
      { line: refused.place.line, path: refused.place.path || undefined, field: refused.field },
      { line: expected.line, path: expected.path, field: expected.field },
      name,
    );
    t.match(refused.reason, expected.reason, `${name}: ${refused.message}`);
  }
});

t.test('what the header and events must hold', async (t) => {
  const file = (body: string, timeZone = '0.0') =>
    Buffer.from(
      `<?xml version="1.0" encoding="UTF-8"?>\n<TimeSeries xmlns="http://www.wldelft.nl/fews/PI" version="1.24">\n` +
        `<timeZone>${timeZone}</timeZone>\n<series>\n<header>\n<type>instantaneous</type>\n` +
        `<locationId>L1</locationId>\n<parameterId>GW</parameterId>\n<missVal>-999</missVal>\n` +
        `<units>mNAP</units>\n</header>\n${body}\n</series>\n</TimeSeries>\n`,
    );
  const event = (attributes: string) => file(`<event ${attributes}/>`);
  const refusedBy = (bytes: Buffer) => {
    const { field, reason } = refusal(bytes);
    return `${field}: ${reason}`;
  };
  t.equal(refusedBy(event('date="2024-01-15" value="1.0"')), 'time: the event has no time');
  t.equal(refusedBy(event('date="2024-01-15" time="10:00:00"')), 'value: the event has no value');
  t.equal(
    refusedBy(event('date="2024-01-15" time="10:00:00" value="Infinity"')),
    'value: "Infinity" is not a number',
  );
  t.equal(
    refusedBy(event('date="15-01-2024" time="10:00:00" value="1"')),
    'date: "15-01-2024" is not a date (YYYY-MM-DD)',
  );
  t.equal(
    refusedBy(event('date="2024-01-15" time="10:00" value="1"')),
    'time: "10:00" is not a time (HH:MM:SS)',
  );
  t.match(
    refusedBy(event('date="2024-02-30" time="10:00:00" value="1"')),
    /^date: 2024-02-30 10:00:00: day 30 does not exist/,
  );
  t.equal(
    refusedBy(event('date="2024-01-15" time="10:00:00" value="1" flag="x"')),
    'flag: "x" is not a flag (0 to 9)',
  );
  t.equal(refusedBy(file('', 'CET')), 'timeZone: "CET" is not a number (hours from UTC, such as 1.0)');
  t.equal(refusedBy(file('', '25.0')), 'timeZone: 25 hours is not a time zone');
  t.equal(
    refusedBy(Buffer.from(file('').toString().replace('<locationId>L1</locationId>', ''))),
    'locationId: the header names no location',
  );
  t.equal(
    refusedBy(Buffer.from(file('').toString().replace('UTF-8', 'ISO-8859-1'))),
    'encoding: ISO-8859-1: only UTF-8 is read (convert the file first, e.g. with iconv)',
  );
  t.match(refusedBy(Buffer.from('')), /^XML: document must contain a root element/);

  const flagged = read(event('date="2024-01-15" time="10:00:00" value="1.5" flag="10"'));
  t.same(flagged.skipped, { 'flag 10 value': 1 }, 'a flag beyond PI 1.x is counted, not read');
  const fraction = read(event('date="2024-01-15" time="10:00:00.250" value="1.5e-1"'));
  t.same(
    fraction.levels.map(({ observedAt, value }) => [observedAt, value]),
    [['2024-01-15T10:00:00.25Z', 0.15]],
    'a fraction of a second and an exponent',
  );
  const unitless = read(
    Buffer.from(
      file('<event date="2024-01-15" time="10:00:00" value="1.5"/>')
        .toString()
        .replace(
          '</TimeSeries>',
          '<series><header><locationId>L2</locationId><parameterId>GW</parameterId></header>' +
            '<event date="2024-01-15" time="10:00:00" value="1.5"/></series></TimeSeries>',
        ),
    ),
  );
  t.same(
    unitless.skipped,
    { 'value without units: locationId L2, parameterId GW': 1 },
    'a series that states no units is not taken for metres',
  );
  const emptySeries = read(file(''));
  t.same(
    [emptySeries.tubes.length, emptySeries.levels.length],
    [1, 0],
    'a series without events still states its tube',
  );
});

t.test('one location in two datums is refused', async (t) => {
  const series = (parameterId: string, units: string) =>
    `<series><header><type>instantaneous</type><locationId>L1</locationId><parameterId>${parameterId}</parameterId>` +
    `<missVal>NaN</missVal><units>${units}</units></header>` +
    '<event date="2024-01-15" time="10:00:00" value="1.0"/></series>';
  const bytes = Buffer.from(
    `<TimeSeries xmlns="http://www.wldelft.nl/fews/PI">${series('GW.nap', 'mNAP')}${series('GW.rel', 'm')}</TimeSeries>`,
  );
  t.equal(
    refusal(bytes, { datum: 'MV' }).reason,
    'locationId L1: parameterId GW.nap is relative to NAP, GW.rel to MV; import one of them (--parameter)',
  );
  t.equal(read(bytes).levels.length, 2, 'with --datum NAP both series are relative to NAP');
});
