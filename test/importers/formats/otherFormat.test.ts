/**
 * A file of another format, given to each command: refused at its start, saying what the command reads
 * and what the file is (XML where CSV was expected, CSV where XML was, another XML document).
 */
import t from 'tap';
import { FORMAT_READERS } from '../../../src/importers/formats/index.js';
import { fixture, read } from './readerSink.js';

const GMW = 'bro/gmw-dispatch.xml';
const GLD = 'bro/gld-dispatch.xml';
const GLD_CSV = 'bro/GLD000000012893_objectsAsCsv.csv';
const DINO = 'dino/B44F0310001.csv';
const FEWS = 'fews/levels-m.xml';

const cases: [
  command: keyof typeof FORMAT_READERS,
  file: string,
  line: number,
  field: string,
  reason: string,
][] = [
  [
    'bro-gmw',
    GLD,
    2,
    'ns11:dispatchDataResponse',
    'is a BRO dsgld message, not a GMW dispatch (dsgmw) or registration request (isgmw): import it with `gwapi import bro-gld`',
  ],
  [
    'bro-gmw',
    DINO,
    1,
    'file',
    'is not XML (it starts with "\\"Periode aangevraagd"): `gwapi import bro-gmw` reads BRO GMW XML',
  ],
  [
    'bro-gmw',
    FEWS,
    2,
    'TimeSeries',
    'is <TimeSeries> in http://www.wldelft.nl/fews/PI, not a GMW dispatch (dsgmw) or registration request (isgmw)',
  ],
  [
    'bro-gld',
    GMW,
    1,
    'dispatchDataResponse',
    'is a BRO dsgmw message, not a GLD dispatch (dsgld) or registration request (isgld): import it with `gwapi import bro-gmw`',
  ],
  [
    'bro-gld',
    DINO,
    1,
    'header',
    `not one of BRO's CSV exports of a GLD (objectsAsCsv's "BRO-ID",…, seriesAsCsv's Tijdstip,… or time,value,…); found "Periode aangevraagd:,01-01-1800,tot:,29-03-2024,,,,,,,,,"`,
  ],
  [
    'bro-gld',
    FEWS,
    2,
    'TimeSeries',
    'is <TimeSeries> in http://www.wldelft.nl/fews/PI, not a GLD dispatch (dsgld) or registration request (isgld)',
  ],
  [
    'dino',
    GMW,
    1,
    'file',
    'is XML (it starts with "<?xml version=\\"1.0\\" "): `gwapi import dino` reads DINO CSV (Grondwaterstanden_Put, …_1.csv)',
  ],
  [
    'dino',
    FEWS,
    1,
    'file',
    'is XML (it starts with "<?xml version=\\"1.0\\" "): `gwapi import dino` reads DINO CSV (Grondwaterstanden_Put, …_1.csv)',
  ],
  [
    'dino',
    GLD_CSV,
    1,
    'row',
    'not a DINO groundwater-level file (Grondwaterstanden_Put, …_1.csv): expected its header lines, then Locatie,Filternummer,…; found "BRO-ID,bronhouder,,kwaliteitsregime,datum eerste meting,datum recentste meting"',
  ],
  [
    'fews',
    GLD,
    2,
    'dispatchDataResponse',
    'the root element is dispatchDataResponse, not TimeSeries: not a FEWS PI-XML time series file',
  ],
  [
    'fews',
    DINO,
    1,
    'XML',
    'not XML: the file starts with "\\"Periode aangevraagd:\\",\\"01-01-1800\\",\\"tot", not "<": `gwapi import fews` reads Delft-FEWS PI-XML',
  ],
];

for (const [command, file, line, field, reason] of cases) {
  t.test(`${command} of ${file}`, async (t) => {
    t.throws(() => read(FORMAT_READERS[command], fixture(file)), {
      name: 'FileRefused',
      place: { line },
      field,
      reason,
    });
    // The opening a reason quotes is of the first chunk read; the place and field are not.
    t.throws(
      () => read(FORMAT_READERS[command], fixture(file), {}, 7),
      { name: 'FileRefused', place: { line }, field },
      'the same place, whatever the chunks',
    );
  });
}
