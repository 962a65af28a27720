import t from 'tap';
import { gldXmlReader } from '../../../../src/importers/formats/bro/gldXml.js';
import { broTube } from '../../../../src/importers/formats/identity.js';
import { FileRefused } from '../../../../src/importers/formats/reader.js';
import { fixture, OPTIONS, pythonUuid5, type Read, type ReadLevel, readAll } from './readAll.js';

const read = (text: string, options = OPTIONS, chunk?: number): Read => {
  const result = readAll(gldXmlReader, text, options, chunk);
  if (result instanceof FileRefused) throw result;
  return result;
};

const refused = (text: string, options = OPTIONS): FileRefused => {
  const result = readAll(gldXmlReader, text, options);
  if (!(result instanceof FileRefused)) throw new Error('the file was read, not refused');
  return result;
};

/** The sink's rule (reader.ts): of two levels of one tube and time, the higher priority, then the later line. */
function resolve(levels: ReadLevel[]): ReadLevel[] {
  const kept = new Map<string, ReadLevel>();
  for (const level of levels) {
    const key = `${level.tube} ${level.time}`;
    const held = kept.get(key);
    if (
      !held ||
      level.priority > held.priority ||
      (level.priority === held.priority && level.line >= held.line)
    ) {
      kept.set(key, level);
    }
  }
  return [...kept.values()].sort((a, b) => a.time.localeCompare(b.time));
}

/** The line (from 1) of the first occurrence of `needle`. */
const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length;

const DISPATCH = fixture('gld-dispatch.xml');
const TUBE_1 = broTube('GMW000000036287', '1');

t.test('a dispatch: every point with its time in UTC, value, status and rank', async (t) => {
  const { tubes, levels, skips } = read(DISPATCH);
  t.same(tubes, [], 'a GLD states levels only');
  t.ok(
    levels.every((level) => level.tube === TUBE_1),
    "all on the dossier's tube",
  );
  t.same(
    levels.map(({ time, value, status }) => [time, value, status]),
    [
      ['2023-12-31T23:00:00Z', 0.671, 'approved'],
      ['2024-01-01T23:00:00Z', 0.655, 'rejected'],
      ['2024-01-03T23:00:00Z', 0.702, 'provisional'],
      ['2024-01-04T23:00:00Z', 0.72, 'provisional'],
      ['2023-12-31T23:00:00Z', 0.69, 'provisional'],
      ['2024-01-04T23:00:00Z', 0.71, 'provisional'],
      ['2024-07-01T10:00:00Z', -0.125, 'provisional'],
    ],
    '0.6709999999999999 is 0.671; +01:00 and +02:00 are taken off; afgekeurd is rejected; goedgekeurd is ' +
      'approved only in a volledigBeoordeeld observation, onbeslist and nogNietBeoordeeld are provisional',
  );
  t.same(
    skips,
    { 'missing value': 2, 'control reading': 1 },
    'xsi:nil points and the controlemeting are counted',
  );
  t.equal(
    levels[0]!.line,
    lineOf(DISPATCH, '<waterml:time>2024-01-01T00:00:00+01:00') - 1,
    "a level's line is its point's (waterml:MeasurementTVP)",
  );
});

t.test(
  'the same time twice: review level first, then the later resultTime, and a nil point never hides a value',
  async (t) => {
    const winners = resolve(read(DISPATCH).levels);
    t.same(
      winners.map(({ time, value }) => [time, value]),
      [
        ['2023-12-31T23:00:00Z', 0.671],
        ['2024-01-01T23:00:00Z', 0.655],
        ['2024-01-03T23:00:00Z', 0.702],
        ['2024-01-04T23:00:00Z', 0.72],
        ['2024-07-01T10:00:00Z', -0.125],
      ],
      'volledigBeoordeeld (0.671) beats a voorlopig later in the file (0.69); of two voorlopig, the later ' +
        'resultTime (0.72) wins though the other comes later in the file, and a nil point of that time ' +
        'with a later resultTime still was skipped',
    );
  },
);

t.test(
  'read whole at once (its points without saxes) or a byte at a time (all by saxes), the same',
  async (t) => {
    for (const file of ['gld-dispatch.xml', 'gld-dispatch-soap.xml', 'gld-addition.xml']) {
      const tube = pythonUuid5('urn:bro:gmw:PB-OH-07:1')[0];
      const options = file === 'gld-addition.xml' ? { ...OPTIONS, tube } : OPTIONS;
      const text = fixture(file);
      t.same(readAll(gldXmlReader, text, options, 1 << 20), readAll(gldXmlReader, text, options, 1), file);
    }
    const point = DISPATCH.slice(
      DISPATCH.indexOf('<waterml:point>'),
      DISPATCH.indexOf('</waterml:point>') + '</waterml:point>'.length,
    );
    const commented = DISPATCH.replace(
      point,
      `<!-- ${point.replace('0.6709999999999999', '9.999')} -->${point}`,
    );
    const withoutLines = (read: Read) => read.levels.map(({ line: _, ...level }) => level);
    t.same(
      withoutLines(read(commented, OPTIONS, 1 << 20)),
      withoutLines(read(DISPATCH)),
      'a point in a comment is no point',
    );
    for (const [odd, what] of [
      [DISPATCH.replace('>0.655<', '>0,655<'), 'a value that is no number'],
      [DISPATCH.replace('>goedgekeurd<', '>goed\u0001gekeurd<'), 'a character XML refuses, in a quality'],
      [DISPATCH.replace('>0.655<', '>0.655\u000b<'), 'a character XML refuses, in a value'],
      [DISPATCH.replace('>goedgekeurd<', '>goed"gekeurd<'), 'a quote, which text may hold'],
      [DISPATCH.replace('>goedgekeurd<', '>goed]]>gekeurd<'), 'the end of a CDATA, which text may not'],
    ]) {
      t.same(
        readAll(gldXmlReader, odd!, OPTIONS, 1 << 20),
        readAll(gldXmlReader, odd!, OPTIONS, 1),
        `${what}: read or refused alike`,
      );
    }
  },
);

t.test('a dispatch inside a SOAP envelope, on one line', async (t) => {
  const soap = fixture('gld-dispatch-soap.xml');
  const { levels, skips } = read(soap);
  t.same(
    levels.map(({ tube, time, value, status }) => [tube, time, value, status]),
    [
      [broTube('GMW000000036287', '2'), '2024-06-01T06:00:00Z', -1.234, 'approved'],
      [broTube('GMW000000036287', '2'), '2024-06-02T06:00:00Z', -1.241, 'approved'],
      [broTube('GMW000000036287', '2'), '2024-06-03T06:00:00Z', -1.25, 'rejected'],
    ],
  );
  t.same(skips, {});
});

t.test('the tube: UUID v5 of urn:bro:gmw:{broId}:{tubeNumber}, as Python computes it', async (t) => {
  t.equal(TUBE_1, pythonUuid5('urn:bro:gmw:GMW000000036287:1')[0]);
  t.equal(read(DISPATCH).levels[0]!.tube, pythonUuid5('urn:bro:gmw:GMW000000036287:1')[0]);
});

t.test('a registration request (GLD_Addition) names no tube: --tube gives it', async (t) => {
  const addition = fixture('gld-addition.xml');
  const noTube = refused(addition);
  t.match(noTube.reason, /names no tube.*--tube/);
  t.match(noTube.place.path, /GLD_Addition\/observation\/om:OM_Observation\/om:result$/);
  t.equal(noTube.field, 'wml2:MeasurementTimeseries');
  const [tube] = pythonUuid5('urn:bro:gmw:PB-OH-07:1') as [string];
  const { levels } = read(addition, { ...OPTIONS, tube: tube.toUpperCase() });
  t.same(
    levels.map(({ tube, time, value, status }) => [tube, time, value, status]),
    [
      [tube, '2025-04-30T22:00:00Z', -3.105, 'provisional'],
      [tube, '2025-05-01T22:00:00Z', -3.118, 'provisional'],
      [tube, '2025-05-02T22:00:00Z', -9.87, 'rejected'],
    ],
    'levels of a voorlopig observation are provisional, afgekeurd rejected; --tube in any case',
  );
});

t.test(
  'a --tube that disagrees with the tube the dossier names is refused; one that agrees is not',
  async (t) => {
    const other = broTube('GMW000000036287', '2');
    const error = refused(DISPATCH, { ...OPTIONS, tube: other });
    t.equal(error.field, 'gldcommon:GroundwaterMonitoringTube');
    t.match(error.reason, `names tube 1 of GMW000000036287 (${TUBE_1}), not the --tube given (${other})`);
    t.equal(read(DISPATCH, { ...OPTIONS, tube: TUBE_1 }).levels.length, 7);
  },
);

t.test('refused files: one error with the line and the element path', async (t) => {
  const pointPath =
    'ns11:dispatchDataResponse/ns11:dispatchDocument/ns11:GLD_O/ns11:observation/om:OM_Observation/om:result/' +
    'waterml:MeasurementTimeseries/waterml:point/waterml:MeasurementTVP';

  const notANumber = DISPATCH.replace('>0.655<', '>0,655<');
  let error = refused(notANumber);
  t.same(error.place, { line: lineOf(notANumber, '>0,655<'), path: pointPath });
  t.equal(error.field, 'waterml:value');
  t.match(error.reason, /"0,655": not a decimal number/);

  const noDate = DISPATCH.replace('>2024-01-02T00:00:00+01:00<', '>00:00:00+01:00<');
  error = refused(noDate);
  t.same(error.place, { line: lineOf(noDate, '>00:00:00+01:00<'), path: pointPath });
  t.match(error.reason, /"00:00:00\+01:00" must be an RFC 3339 date-time/);

  const centimetres = DISPATCH.replace('<waterml:value uom="m">0.702', '<waterml:value uom="cm">0.702');
  error = refused(centimetres);
  t.same(error.place, { line: lineOf(centimetres, 'uom="cm"'), path: pointPath });
  t.match(error.reason, 'unit "cm" is not read: levels are read in metres');

  const cut = DISPATCH.slice(0, DISPATCH.indexOf('<waterml:value uom="m">0.710') + 26);
  error = refused(cut);
  t.match(error.reason, /ends before this element closes: it is truncated/);
  t.equal(error.place.path, pointPath);
  t.equal(error.field, 'waterml:value');
  t.equal(error.place.line, lineOf(DISPATCH, '0.710'));

  error = refused(
    'time,value,status_quality_control,censor_reason,censor_limit\n2024-01-01T00:00:00+01:00,0.5,goedgekeurd,,\n',
  );
  t.equal(error.place.line, 1);
  t.equal(error.place.path, undefined);
  t.match(error.reason, /is not XML .*reads BRO GLD XML/);

  error = refused(fixture('gmw-dispatch.xml'));
  t.match(error.reason, /is a BRO dsgmw message, not a GLD dispatch \(dsgld\).*gwapi import bro-gmw/);

  error = refused(
    '<?xml version="1.0"?>\n<TimeSeries xmlns="http://www.wldelft.nl/fews/PI" version="1.2"></TimeSeries>',
  );
  t.equal(error.place.line, 2);
  t.match(error.reason, /is <TimeSeries> in http:\/\/www\.wldelft\.nl\/fews\/PI, not a GLD dispatch/);

  error = refused(DISPATCH.replace('<ns11:researchFirstDate>', '<ns11:researchFirstDate><<'));
  t.match(error.reason, /^not well-formed: /);

  error = refused('');
  t.match(error.reason, /is empty/);

  error = refused(DISPATCH.replaceAll('ns11:GLD_O', 'ns11:BRO_DO'));
  t.match(error.reason, /a dispatch of BRO_DO is not read: `gwapi import bro-gld` reads GLD_O/);
});

t.test('a file of control readings only is no error: every point is counted', async (t) => {
  const onlyControl = DISPATCH.replaceAll('>reguliereMeting<', '>controlemeting<');
  const { levels, skips } = read(onlyControl);
  t.same(levels, []);
  t.same(skips, { 'missing value': 2, 'control reading': 8 });
});
