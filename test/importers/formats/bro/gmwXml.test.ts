import t from 'tap';
import { gmwXmlReader } from '../../../../src/importers/formats/bro/gmwXml.js';
import { rdToWgs84 } from '../../../../src/importers/formats/projection.js';
import { FileRefused } from '../../../../src/importers/formats/reader.js';
import { fixture, metresBetween, OPTIONS, pythonUuid5, type Read, readAll } from './readAll.js';

const read = (text: string, chunk?: number): Read => {
  const result = readAll(gmwXmlReader, text, OPTIONS, chunk);
  if (result instanceof FileRefused) throw result;
  return result;
};

const refused = (text: string): FileRefused => {
  const result = readAll(gmwXmlReader, text, OPTIONS);
  if (!(result instanceof FileRefused)) throw new Error('the file was read, not refused');
  return result;
};

const DISPATCH = fixture('gmw-dispatch.xml');
const REGISTRATION = fixture('gmw-registration.xml');
/** GMW000000036287 as BRO publishes it: RD New, and ETRS89 (its standardizedLocation). */
const RD = { x: 118300.381, y: 439767.501 };
const ETRS89 = { latitude: 51.94514556, longitude: 4.85343324 };

const elevations = ({ number, groundLevel, tubeTop, screenTop, screenBottom }: Read['tubes'][number]) => ({
  number,
  groundLevel,
  tubeTop,
  screenTop,
  screenBottom,
});

t.test(
  'a dispatch: each tube of the well, its elevations in metres relative to NAP, the ETRS89 location',
  async (t) => {
    const { tubes, levels, skips } = read(DISPATCH);
    t.same(levels, []);
    t.same(skips, {});
    t.same(tubes.map(elevations), [
      { number: '1', groundLevel: 1.932, tubeTop: 1.802, screenTop: 0.142, screenBottom: -0.858 },
      { number: '2', groundLevel: 1.932, tubeTop: 1.795, screenTop: -7.205, screenBottom: -9.205 },
    ]);
    for (const tube of tubes) {
      t.equal(tube.wellName, 'GMW000000036287');
      t.same(tube.location, ETRS89, 'the standardizedLocation, used as WGS 84');
      t.equal(tube.unit, 'm');
      t.equal(tube.verticalDatum, 'NAP');
    }
    t.same(tubes[1]!.place, {
      line: 1,
      path: 'dispatchDataResponse/dispatchDocument/GMW_PPO/monitoringTube',
    });
  },
);

t.test('identity: UUID v5 of urn:bro:gmw:{broId}:{tubeNumber}, as Python computes it', async (t) => {
  const { tubes } = read(DISPATCH);
  t.same(
    tubes.map((tube) => tube.identifier),
    [...pythonUuid5('urn:bro:gmw:GMW000000036287:1', 'urn:bro:gmw:GMW000000036287:2')],
  );
});

t.test('RD New converted lies within 1 m of the ETRS89 position BRO states for the same well', async (t) => {
  const rdOnly = DISPATCH.replace(/<standardizedLocation>.*<\/standardizedLocation>/, '');
  t.not(rdOnly, DISPATCH);
  const [tube] = read(rdOnly).tubes;
  t.same(
    tube!.location,
    rdToWgs84(RD.x, RD.y),
    'without a standardizedLocation, the deliveredLocation converted',
  );
  const metres = metresBetween(tube!.location!, ETRS89);
  t.ok(metres < 1, `${metres.toFixed(3)} m from BRO's ETRS89 position`);
});

t.test('the same dispatch in a SOAP envelope', async (t) => {
  const path =
    'soapenv:Envelope/soapenv:Body/ns11:dispatchDataResponse/ns11:dispatchDocument/ns11:GMW_PPO/ns11:monitoringTube';
  t.same(
    read(fixture('gmw-dispatch-soap.xml')).tubes,
    read(DISPATCH).tubes.map((tube) => ({ ...tube, place: { line: 5, path } })),
  );
  const withHeader = fixture('gmw-dispatch-soap.xml').replace(
    '<soapenv:Header/>',
    '<soapenv:Header><wsse:Security xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd">' +
      '<wsse:UsernameToken><wsse:Username>afnemer</wsse:Username></wsse:UsernameToken></wsse:Security></soapenv:Header>',
  );
  t.equal(read(withHeader).tubes.length, 2, "a header's elements are passed over");
});

t.test(
  'a registration request: named by objectIdAccountableParty, the screen from the lengths',
  async (t) => {
    const { tubes } = read(REGISTRATION);
    t.same(
      tubes.map(elevations),
      [
        { number: '1', groundLevel: 3.18, tubeTop: 3.42, screenTop: -3.22, screenBottom: -4.22 },
        { number: '2', groundLevel: 3.18, tubeTop: 3.4, screenTop: -8.5, screenBottom: -10.5 },
      ],
      'screenTop = tubeTopPosition − plainTubePartLength, screenBottom = screenTop − screenLength (rounded)',
    );
    t.same(
      tubes.map((tube) => tube.wellName),
      ['PB-OH-07', 'PB-OH-07'],
    );
    t.equal(tubes[0]!.identifier, pythonUuid5('urn:bro:gmw:PB-OH-07:1')[0]);
    t.same(tubes[0]!.location, rdToWgs84(187512.43, 430228.91));
    t.equal(
      tubes[1]!.place.line,
      REGISTRATION.slice(0, REGISTRATION.indexOf('<ns:tubeNumber>2')).split('\n').length - 1,
    );

    const registered = REGISTRATION.replace(
      '<ns1:qualityRegime>',
      '<ns1:broId>GMW000000099001</ns1:broId>\n  <ns1:qualityRegime>',
    );
    t.same(
      read(registered).tubes.map((tube) => [tube.wellName, tube.identifier]),
      [
        ['GMW000000099001', pythonUuid5('urn:bro:gmw:GMW000000099001:1')[0]],
        ['GMW000000099001', pythonUuid5('urn:bro:gmw:GMW000000099001:2')[0]],
      ],
      "a request that carries the well's BRO id names it by that",
    );
  },
);

t.test('xsi:nil positions are unknown', async (t) => {
  const nil = DISPATCH.replace(
    '<gmwcommon:groundLevelPosition uom="m">1.932</gmwcommon:groundLevelPosition>',
    '<gmwcommon:groundLevelPosition xsi:nil="true" uom="m"/>',
  ).replace(
    '<dispatchDataResponse ',
    '<dispatchDataResponse xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ',
  );
  t.same(
    read(nil).tubes.map((tube) => tube.groundLevel),
    [null, null],
  );
});

t.test('refused files: one error with the line and the element path', async (t) => {
  const tubePath = 'ns:registrationRequest/ns:sourceDocument/ns:GMW_Construction/ns:monitoringTube';
  const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split('\n').length;

  const notANumber = REGISTRATION.replace('>3.40<', '>3,40<');
  let error = refused(notANumber);
  t.same(error.place, { line: lineOf(notANumber, '>3,40<'), path: tubePath });
  t.match(error.reason, /"3,40": not a decimal number/);

  const centimetres = REGISTRATION.replace(
    '<ns:tubeTopPosition uom="m">3.40',
    '<ns:tubeTopPosition uom="cm">340',
  );
  error = refused(centimetres);
  t.same(error.place, { line: lineOf(centimetres, 'uom="cm"'), path: tubePath });
  t.match(error.reason, 'unit "cm" is not read: BRO states positions in metres');

  error = refused(
    REGISTRATION.replace(
      '<ns2:verticalDatum codeSpace="urn:bro:gmw:VerticalDatum">NAP',
      '<ns2:verticalDatum codeSpace="urn:bro:gmw:VerticalDatum">MSL',
    ),
  );
  t.match(error.reason, '"MSL" is not read: elevations are read relative to NAP');

  error = refused(REGISTRATION.replace('EPSG::28992', 'EPSG::25831'));
  t.match(error.reason, /srsName "urn:ogc:def:crs:EPSG::25831" is not read/);
  t.match(error.place.path, /ns:deliveredLocation\/ns2:location$/);
  t.equal(error.field, 'ns3:pos');

  const cut = DISPATCH.slice(0, DISPATCH.indexOf('<tubeNumber>2') + 13);
  error = refused(cut);
  t.match(error.reason, /ends before this element closes: it is truncated/);
  t.same(error.place, {
    line: 1,
    path: 'dispatchDataResponse/dispatchDocument/GMW_PPO/monitoringTube',
  });

  error = refused(fixture('gld-dispatch.xml'));
  t.match(error.reason, /is a BRO dsgld message, not a GMW dispatch \(dsgmw\).*gwapi import bro-gld/);
  t.same(error.place, { line: 2, path: undefined });
  t.equal(error.field, 'ns11:dispatchDataResponse');

  error = refused(
    'Locatie,Filternummer,Externe aanduiding,X-coordinaat,Y-coordinaat\nB38B0207,001,,118300,439767\n',
  );
  t.match(error.reason, /is not XML .*reads BRO GMW XML/);

  error = refused(REGISTRATION.replaceAll('GMW_Construction', 'GMW_Positions'));
  t.match(
    error.reason,
    /a registration request of GMW_Positions is not read: `gwapi import bro-gmw` reads GMW_Construction/,
  );

  error = refused(REGISTRATION.replace(/<ns:objectIdAccountableParty>.*<\/ns:objectIdAccountableParty>/, ''));
  t.match(error.reason, /names no well/);
});
