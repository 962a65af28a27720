/**
 * The field's files as the importers' benchmarks generate them, in the shape of the real ones: a BRO
 * GLD dispatch (`dsgld` `GLD_O`, WaterML 2.0 `MeasurementTVP` points), DINO `Grondwaterstanden_Put`
 * CSV files (header block, metadata and levels sections) and a Delft-FEWS PI-XML `TimeSeries` file.
 * Each is written as it is generated, never held whole (files of gigabytes), and beside it, if asked, its
 * twin: the same points as `gwapi import measurements` reads them (with the status column), so that the
 * two imports can be compared point for point.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { broTube, dinoTube, fewsTube } from '../../src/importers/formats/identity.js';
import type { RegistryWell } from '../../src/importers/registry/registry.js';

type TwinStatus = 'approved' | 'provisional' | 'rejected';

/** A file written in chunks of about a megabyte, waiting for the disk when it lags. */
class ChunkedFile {
  private readonly stream: WriteStream;
  private parts: string[] = [];
  private length = 0;

  constructor(path: string) {
    this.stream = createWriteStream(path);
  }

  put(text: string): void {
    this.parts.push(text);
    this.length += text.length;
  }

  /** Call between items: writes the chunk once it is large enough. */
  async drain(): Promise<void> {
    if (this.length < 1 << 20) return;
    const chunk = this.parts.join('');
    this.parts = [];
    this.length = 0;
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    this.stream.end(this.parts.join(''));
    await finished(this.stream);
  }
}

/** The `gwapi import measurements` CSV of the same points, or nothing. */
class Twin {
  private readonly file: ChunkedFile | undefined;

  constructor(path: string | undefined) {
    this.file = path === undefined ? undefined : new ChunkedFile(path);
    this.file?.put('tubeIdentifier,observedAt,value,status\n');
  }

  point(tube: string, seconds: number, value: string, status: TwinStatus): void {
    this.file?.put(`${tube},${new Date(seconds * 1000).toISOString().slice(0, 19)}Z,${value},${status}\n`);
  }

  async drain(): Promise<void> {
    await this.file?.drain();
  }

  async close(): Promise<void> {
    await this.file?.close();
  }
}

/** A groundwater level in metres, to the millimetre, that moves as a well's does: seasons and noise. */
function level(i: number, perYear: number): number {
  const seasonal = 0.45 * Math.sin((2 * Math.PI * i) / perYear);
  return Math.round((-1.6 + seasonal + ((i * 7919) % 97) / 1000) * 1000) / 1000;
}

/** `YYYY-MM-DDTHH:MM:SS` of UTC `seconds` shifted by `offsetHours`, as a file states local times. */
const localTime = (seconds: number, offsetHours: number) =>
  new Date((seconds + offsetHours * 3600) * 1000).toISOString().slice(0, 19);

const UTC_SECONDS = (year: number, month: number, day: number) => Date.UTC(year, month - 1, day) / 1000;

/** A WaterML parameter of BRO's: `urn:bro:gld:{name}` with a code of `urn:bro:gld:{codeSpace}`. */
const namedValue = (name: string, codeSpace: string, value: string) => `<waterml:parameter>
  <om:NamedValue>
    <om:name xlink:href="urn:bro:gld:${name}"/>
    <om:value xsi:type="gml:CodeWithAuthorityType" codeSpace="urn:bro:gld:${codeSpace}">${value}</om:value>
  </om:NamedValue>
</waterml:parameter>`;

export interface GldOptions {
  /** The GMW's BRO id and the tube's number. */
  well: string;
  tubeNumber: string;
  points: number;
  stepMinutes: number;
  /** Points per observation: each observation is a period BRO reviewed as a whole. */
  pointsPerObservation: number;
  /** With a line per element, as an editor shows it; BRO's services write a dispatch on one line. */
  indented?: boolean;
  twin?: string;
}

/** The registry that holds the GLD's tube: a GLD names a tube that must be registered first. */
export const gldRegistry = (options: Pick<GldOptions, 'well' | 'tubeNumber'>): RegistryWell[] => [
  {
    name: options.well,
    tubes: [{ identifier: broTube(options.well, options.tubeNumber), number: options.tubeNumber }],
  },
];

const GLD_START = UTC_SECONDS(1999, 12, 31) + 23 * 3600; // 2000-01-01T00:00:00+01:00

/**
 * A BRO GLD dispatch (`dispatchDataResponse` of the public REST service: `dsgld` 1.0, `GLD_O`) of one
 * tube: observations of `pointsPerObservation` points each, `volledigBeoordeeld` (their points
 * `goedgekeurd`, one in 997 `afgekeurd`) but the last, which is `voorlopig` and `nogNietBeoordeeld`.
 * Times carry BRO's `+01:00`; one value in 16 is written with a binary artefact
 * (`-1.2339999999999998`), as real files carry them. Every point has a value and a time of its own, so
 * every point is written: read, written and twin rows are all `points`. On one line, as BRO's REST
 * service and download portal write it, unless `indented`.
 */
export async function writeGldXml(path: string, options: GldOptions): Promise<void> {
  const layout = options.indented
    ? (text: string) => text
    : (text: string) => text.replace(/^ +/gm, '').replaceAll('\n', '');
  const file = new ChunkedFile(path);
  const twin = new Twin(options.twin);
  const tube = broTube(options.well, options.tubeNumber);
  const step = options.stepMinutes * 60;
  const perYear = (365 * 1440) / options.stepMinutes;
  const observations = Math.ceil(options.points / options.pointsPerObservation);
  file.put(
    layout(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<ns11:dispatchDataResponse xmlns:ns11="http://www.broservices.nl/xsd/dsgld/1.0" xmlns:brocom="http://www.broservices.nl/xsd/brocommon/3.0" xmlns:gldcommon="http://www.broservices.nl/xsd/gldcommon/1.0" xmlns:gml="http://www.opengis.net/gml/3.2" xmlns:om="http://www.opengis.net/om/2.0" xmlns:waterml="http://www.opengis.net/waterml/2.0" xmlns:swe="http://www.opengis.net/swe/2.0" xmlns:gmd="http://www.isotc211.org/2005/gmd" xmlns:gco="http://www.isotc211.org/2005/gco" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <brocom:responseType>dispatch</brocom:responseType>
  <brocom:requestReference>bench</brocom:requestReference>
  <brocom:dispatchTime>2026-11-29T08:00:00+01:00</brocom:dispatchTime>
  <ns11:dispatchDocument>
    <ns11:GLD_O gml:id="BRO_0001">
      <brocom:broId>GLD000000099001</brocom:broId>
      <brocom:deliveryAccountableParty>27376655</brocom:deliveryAccountableParty>
      <brocom:qualityRegime>IMBRO</brocom:qualityRegime>
      <ns11:deliveryContext codeSpace="urn:bro:gld:DeliveryContext">publiekeTaak</ns11:deliveryContext>
      <ns11:registrationHistory>
        <brocom:objectRegistrationTime>2021-04-01T10:00:00+02:00</brocom:objectRegistrationTime>
        <brocom:registrationStatus codeSpace="urn:bro:RegistrationStatus">aangevuld</brocom:registrationStatus>
        <brocom:latestAdditionTime>2026-11-01T09:00:00+01:00</brocom:latestAdditionTime>
        <brocom:corrected>nee</brocom:corrected>
        <brocom:underReview>nee</brocom:underReview>
        <brocom:deregistered>nee</brocom:deregistered>
        <brocom:reregistered>nee</brocom:reregistered>
      </ns11:registrationHistory>
      <ns11:researchFirstDate>${localTime(GLD_START, 1).slice(0, 10)}</ns11:researchFirstDate>
      <ns11:researchLastDate>${localTime(GLD_START + (options.points - 1) * step, 1).slice(0, 10)}</ns11:researchLastDate>
      <ns11:monitoringPoint>
        <gldcommon:GroundwaterMonitoringTube gml:id="BRO_0002">
          <gldcommon:broId>${options.well}</gldcommon:broId>
          <gldcommon:tubeNumber>${options.tubeNumber}</gldcommon:tubeNumber>
        </gldcommon:GroundwaterMonitoringTube>
      </ns11:monitoringPoint>
      <ns11:groundwaterMonitoringNet>
        <gldcommon:GroundwaterMonitoringNet gml:id="BRO_0003">
          <gldcommon:broId>GMN000000000099</gldcommon:broId>
        </gldcommon:GroundwaterMonitoringNet>
      </ns11:groundwaterMonitoringNet>
`),
  );
  // A point's element in four pieces around its time, value and qualifier.
  const point = layout(`              <waterml:point>
                <waterml:MeasurementTVP>
                  <waterml:time>\0+01:00</waterml:time>
                  <waterml:value uom="m">\0</waterml:value>
                  <waterml:metadata>
                    <waterml:TVPMeasurementMetadata>
                      <waterml:qualifier>
                        <swe:Category>
                          <swe:codeSpace xlink:href="urn:bro:gld:StatusQualityControl"/>
                          <swe:value>\0</swe:value>
                        </swe:Category>
                      </waterml:qualifier>
                      <waterml:interpolationType xlink:href="http://www.opengis.net/def/waterml/2.0/interpolationType/Discontinuous"/>
                    </waterml:TVPMeasurementMetadata>
                  </waterml:metadata>
                </waterml:MeasurementTVP>
              </waterml:point>
`).split('\0');
  for (let o = 0; o < observations; o++) {
    const first = o * options.pointsPerObservation;
    const last = Math.min(options.points, first + options.pointsPerObservation) - 1;
    const reviewed = o < observations - 1;
    const begin = localTime(GLD_START + first * step, 1);
    const end = localTime(GLD_START + last * step, 1);
    file.put(
      layout(`      <ns11:observation>
        <om:OM_Observation gml:id="BRO_${4 + o * 5}">
          <om:type xlink:href="http://www.opengis.net/def/observationType/waterml/2.0/MeasurementTimeseriesTVPObservation"/>
          <om:metadata>
            <waterml:ObservationMetadata>
              <gmd:contact>
                <gmd:CI_ResponsibleParty>
                  <gmd:organisationName>
                    <gco:CharacterString>27376655</gco:CharacterString>
                  </gmd:organisationName>
                  <gmd:role>
                    <gmd:CI_RoleCode codeList="urn:ISO:19115:CI_RoleCode" codeListValue="principalInvestigator">principalInvestigator</gmd:CI_RoleCode>
                  </gmd:role>
                </gmd:CI_ResponsibleParty>
              </gmd:contact>
              <gmd:dateStamp>
                <gco:Date>${end.slice(0, 10)}</gco:Date>
              </gmd:dateStamp>
              <gmd:identificationInfo gco:nilReason="unknown"/>
              <waterml:status xlink:href="urn:bro:gld:StatusCode:${reviewed ? 'volledigBeoordeeld' : 'voorlopig'}"/>
              <waterml:parameter>
                <om:NamedValue>
                  <om:name xlink:href="urn:bro:gld:ObservationMetadata:principalInvestigator"/>
                  <om:value xsi:type="gldcommon:OrganizationType">
                    <gldcommon:chamberOfCommerceNumber>27376655</gldcommon:chamberOfCommerceNumber>
                  </om:value>
                </om:NamedValue>
              </waterml:parameter>
              ${namedValue('ObservationMetadata:observationType', 'ObservationType', 'reguliereMeting')}
            </waterml:ObservationMetadata>
          </om:metadata>
          <om:phenomenonTime>
            <gml:TimePeriod gml:id="BRO_${5 + o * 5}">
              <gml:beginPosition>${begin}+01:00</gml:beginPosition>
              <gml:endPosition>${end}+01:00</gml:endPosition>
            </gml:TimePeriod>
          </om:phenomenonTime>
          <om:resultTime>
            <gml:TimeInstant gml:id="BRO_${6 + o * 5}">
              <gml:timePosition>${end}+01:00</gml:timePosition>
            </gml:TimeInstant>
          </om:resultTime>
          <om:procedure>
            <waterml:ObservationProcess gml:id="BRO_${7 + o * 5}">
              <waterml:processType xlink:href="http://www.opengis.net/def/waterml/2.0/processType/Algorithm"/>
              <waterml:processReference xlink:href="urn:bro:gld:ProcessReference:NEN_EN_ISO_22475v2006_C11v2010"/>
              ${namedValue('ObservationProcess:airPressureCompensationType', 'AirPressureCompensationType', 'KNMImeting')}
              ${namedValue('ObservationProcess:evaluationProcedure', 'EvaluationProcedure', 'oordeelDeskundige')}
              ${namedValue('ObservationProcess:measurementInstrumentType', 'MeasurementInstrumentType', 'druksensor')}
            </waterml:ObservationProcess>
          </om:procedure>
          <om:observedProperty xlink:href="urn:bro:gld:ObservationType:grondwaterstand"/>
          <om:featureOfInterest xlink:href="#BRO_0002"/>
          <om:result>
            <waterml:MeasurementTimeseries gml:id="BRO_${8 + o * 5}">
`),
    );
    for (let i = first; i <= last; i++) {
      const seconds = GLD_START + i * step;
      const value = level(i, perYear);
      const rejected = reviewed && i % 997 === 996;
      const qualifier = reviewed ? (rejected ? 'afgekeurd' : 'goedgekeurd') : 'nogNietBeoordeeld';
      const text = i % 16 === 0 ? String(value * (1 - Number.EPSILON)) : value.toFixed(3);
      file.put(`${point[0]}${localTime(seconds, 1)}${point[1]}${text}${point[2]}${qualifier}${point[3]}`);
      twin.point(
        tube,
        seconds,
        value.toFixed(3),
        reviewed ? (rejected ? 'rejected' : 'approved') : 'provisional',
      );
      if (i % 1024 === 0) await Promise.all([file.drain(), twin.drain()]);
    }
    file.put(
      layout(`            </waterml:MeasurementTimeseries>
          </om:result>
        </om:OM_Observation>
      </ns11:observation>
`),
    );
  }
  file.put(
    layout(`    </ns11:GLD_O>
  </ns11:dispatchDocument>
</ns11:dispatchDataResponse>
`),
  );
  await Promise.all([file.close(), twin.close()]);
}

/** A DINO file holds one filter's levels; its dates are midnight in Europe/Amsterdam. */
export const DINO_DAYS_PER_FILE = 10_000;
const DINO_START = { year: 1990, month: 1, day: 1 };

/** `dd-mm-yyyy`, as DINO writes a date. */
const dinoDate = (date: Date) =>
  `${String(date.getUTCDate()).padStart(2, '0')}-${String(date.getUTCMonth() + 1).padStart(2, '0')}-${date.getUTCFullYear()}`;

/** UTC seconds of midnight of `date` (a UTC midnight standing for the calendar day) in Europe/Amsterdam. */
function amsterdamMidnight(date: Date): number {
  const day = date.getTime() / 1000;
  // Since 1977 the offset is +01:00 or +02:00: the one whose midnight Amsterdam calls 00 of that day.
  for (const hours of [1, 2]) {
    const candidate = day - hours * 3600;
    if (AMSTERDAM_HOUR.format(new Date(candidate * 1000)) === '00') return candidate;
  }
  throw new Error(`no Amsterdam midnight on ${date.toISOString()}`);
}
const AMSTERDAM_HOUR = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Europe/Amsterdam',
  hour: '2-digit',
  hourCycle: 'h23',
});

export interface DinoFile {
  path: string;
  location: string;
}

/** The DINO filters of `files` files: one location and filter `001` each, RD coordinates and elevations. */
export const dinoLocation = (n: number) =>
  `B${String(30 + (n % 20)).padStart(2, '0')}C${String(n).padStart(4, '0')}`;

export const dinoRegistry = (files: number): RegistryWell[] =>
  Array.from({ length: files }, (_, n) => ({
    name: dinoLocation(n),
    tubes: [{ identifier: dinoTube(dinoLocation(n), '001'), number: '001' }],
  }));

/**
 * DINO `Grondwaterstanden_Put` CSV files (`…001_1.csv`) of `points` daily levels in all, at most
 * DINO_DAYS_PER_FILE a file (a filter each): the header block, the metadata section (two dated periods,
 * the later one the tube's) and the levels section, whose header writes `t.o.v` without its dot as the
 * archive's files do. Levels in whole centimetres relative to NAP, MP and MV. Returns the files.
 */
export async function writeDinoCsvs(folder: string, points: number, twinPath?: string): Promise<DinoFile[]> {
  const twin = new Twin(twinPath);
  const files: DinoFile[] = [];
  for (let n = 0; n * DINO_DAYS_PER_FILE < points; n++) {
    const location = dinoLocation(n);
    const path = `${folder}/${location}001_1.csv`;
    files.push({ path, location });
    const days = Math.min(DINO_DAYS_PER_FILE, points - n * DINO_DAYS_PER_FILE);
    const first = new Date(Date.UTC(DINO_START.year, DINO_START.month - 1, DINO_START.day));
    const last = new Date(first.getTime() + (days - 1) * 86_400_000);
    const tube = dinoTube(location, '001');
    const groundLevel = 120 + n;
    const tubeTop = groundLevel + 70;
    const file = new ChunkedFile(path);
    const row = (cells: string[]) => `${cells.map((cell) => `"${cell}"`).join(',')}\n`;
    const blank = `${','.repeat(12)}\n`;
    /** A metadata period from `start` to `end` (empty: still current), elevations shifted by `shift` cm. */
    const period = (start: string, end: string, shift: number) =>
      row([
        location,
        '001',
        `${n}BP0037`,
        String(117960 + n * 37),
        String(439670 + n * 41),
        String(groundLevel + shift),
        start,
        start,
        end,
        String(tubeTop + shift),
        '70',
        String(groundLevel - 850),
        String(groundLevel - 950),
      ]);
    file.put(
      `"Periode aangevraagd:","01-01-1800","tot:","${dinoDate(last)}",,,,,,,,,\n` +
        `"Gegevens beschikbaar:","${dinoDate(first)}","tot:","${dinoDate(last)}",,,,,,,,,\n` +
        `"Datum:","29-11-2026",,,,,,,,,,,\n"Referentie:","NAP",,,,,,,,,,,\n${blank}` +
        `"NAP:","Normaal Amsterdams Peil",,,,,,,,,,,\n"MV:","Maaiveld",,,,,,,,,,,\n"MP:","Meetpunt",,,,,,,,,,,\n${blank}` +
        row([
          'Locatie',
          'Filternummer',
          'Externe aanduiding',
          'X-coordinaat',
          'Y-coordinaat',
          'Maaiveld (cm t.o.v. NAP)',
          'Datum maaiveld gemeten',
          'Startdatum',
          'Einddatum',
          'Meetpunt (cm t.o.v. NAP)',
          'Meetpunt (cm t.o.v. MV)',
          'Bovenkant filter (cm t.o.v. NAP)',
          'Onderkant filter (cm t.o.v. NAP)',
        ]) +
        period('01-01-1990', '31-12-1999', -8) +
        period('01-01-2000', '', 0) +
        blank +
        row([
          'Locatie',
          'Filternummer',
          'Peildatum',
          'Stand (cm t.o.v. MP)',
          'Stand (cm t.o.v. MV)',
          'Stand (cm t.o.v NAP)',
          'Bijzonderheid',
          'Opmerking',
          '',
          '',
          '',
          '',
          '',
        ]),
    );
    for (let d = 0; d < days; d++) {
      const date = new Date(first.getTime() + d * 86_400_000);
      const nap = Math.round(level(d, 365) * 100);
      file.put(
        row([
          location,
          '001',
          dinoDate(date),
          String(tubeTop - nap),
          String(groundLevel - nap),
          String(nap),
          '',
          '',
          '',
          '',
          '',
          '',
          '',
        ]),
      );
      twin.point(tube, amsterdamMidnight(date), (nap / 100).toFixed(2), 'provisional');
      if (d % 1024 === 0) await Promise.all([file.drain(), twin.drain()]);
    }
    await file.close();
  }
  await twin.close();
  return files;
}

/** A FEWS series is a logger's year of 15-minute levels. */
export const FEWS_EVENTS_PER_SERIES = 35_040;
const FEWS_START = UTC_SECONDS(2023, 1, 1) - 3600; // 2023-01-01T00:00:00 at timeZone 1.0

export const fewsLocation = (n: number) => `PB${String(n + 1).padStart(4, '0')}`;

export const fewsRegistry = (series: number): RegistryWell[] =>
  Array.from({ length: series }, (_, n) => ({
    name: fewsLocation(n),
    tubes: [{ identifier: fewsTube(fewsLocation(n)), number: '1' }],
  }));

/** Series in a FEWS file of `points` events. */
export const fewsSeries = (points: number) => Math.ceil(points / FEWS_EVENTS_PER_SERIES);

/**
 * A Delft-FEWS PI-XML `TimeSeries` file (PI 1.x, `timeZone` 1.0) of `points` events: a series per
 * logger location of FEWS_EVENTS_PER_SERIES 15-minute levels in `mNAP`, each header with its `lat`,
 * `lon` and RD `x`, `y`; flag 0 (reliable), one event in 997 flag 6 (unreliable, so rejected).
 */
export async function writeFewsXml(path: string, points: number, twinPath?: string): Promise<void> {
  const file = new ChunkedFile(path);
  const twin = new Twin(twinPath);
  file.put(`<?xml version="1.0" encoding="UTF-8"?>
<TimeSeries xmlns="http://www.wldelft.nl/fews/PI" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.wldelft.nl/fews/PI http://fews.wldelft.nl/schemas/version1.0/pi-schemas/pi_timeseries.xsd" version="1.2">
    <timeZone>1.0</timeZone>
`);
  for (let s = 0; s * FEWS_EVENTS_PER_SERIES < points; s++) {
    const events = Math.min(FEWS_EVENTS_PER_SERIES, points - s * FEWS_EVENTS_PER_SERIES);
    const tube = fewsTube(fewsLocation(s));
    const end = localTime(FEWS_START + (events - 1) * 900, 1);
    file.put(`    <series>
        <header>
            <type>instantaneous</type>
            <moduleInstanceId>ImportLoggers</moduleInstanceId>
            <locationId>${fewsLocation(s)}</locationId>
            <parameterId>GW.meting</parameterId>
            <timeStep unit="second" multiplier="900"/>
            <startDate date="2023-01-01" time="00:00:00"/>
            <endDate date="${end.slice(0, 10)}" time="${end.slice(11)}"/>
            <missVal>-999.0</missVal>
            <stationName>Peilbuis ${fewsLocation(s)}</stationName>
            <lat>${(52.0 + s * 0.0007).toFixed(6)}</lat>
            <lon>${(5.1 + s * 0.0009).toFixed(6)}</lon>
            <x>${(136000 + s * 61.6).toFixed(1)}</x>
            <y>${(455000 + s * 77.9).toFixed(1)}</y>
            <z>0.0</z>
            <units>mNAP</units>
        </header>
`);
    for (let e = 0; e < events; e++) {
      const seconds = FEWS_START + e * 900;
      const local = localTime(seconds, 1);
      const value = level(e + s * 131, FEWS_EVENTS_PER_SERIES);
      const flag = e % 997 === 996 ? 6 : 0;
      file.put(
        `        <event date="${local.slice(0, 10)}" time="${local.slice(11)}" value="${value.toFixed(3)}" flag="${flag}"/>\n`,
      );
      twin.point(tube, seconds, value.toFixed(3), flag === 6 ? 'rejected' : 'provisional');
      if (e % 1024 === 0) await Promise.all([file.drain(), twin.drain()]);
    }
    file.put('    </series>\n');
  }
  file.put('</TimeSeries>\n');
  await Promise.all([file.close(), twin.close()]);
}

/** Points of a one-line GLD dispatch of about `bytes` (each point's element is some 557 bytes). */
export const gldPointsFor = (bytes: number) => Math.ceil(bytes / 557);
/** Events of a FEWS file of about `bytes` (each event's line is some 75 bytes). */
export const fewsPointsFor = (bytes: number) => Math.ceil(bytes / 75);
