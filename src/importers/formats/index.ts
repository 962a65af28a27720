/** The readers of `gwapi import <format>`, by command; each format's reader adds its own entry. */
import { gldCsvReader } from './bro/gldCsv.js';
import { gldXmlReader } from './bro/gldXml.js';
import { gmwXmlReader } from './bro/gmwXml.js';
import { dinoReader } from './dino/dinoCsv.js';
import { readFews } from './fews/fewsReader.js';
import { byFirstByte } from './firstByte.js';
import type { ReaderFactory } from './reader.js';

export const FORMAT_COMMANDS = ['bro-gmw', 'bro-gld', 'dino', 'fews'] as const;
export type FormatCommand = (typeof FORMAT_COMMANDS)[number];

/** `bro-gld` reads XML and BRO's CSV exports alike: byFirstByte (firstByte.ts) chooses; `dino` refuses XML by it. */
export const FORMAT_READERS: Record<FormatCommand, ReaderFactory> = {
  'bro-gmw': gmwXmlReader,
  'bro-gld': byFirstByte({
    xml: gldXmlReader,
    csv: gldCsvReader,
    reads: "`gwapi import bro-gld` reads BRO GLD XML or BRO's CSV exports of a GLD",
  }),
  // The CSV parser would object to an XML file's first quote, not to its being XML.
  dino: byFirstByte({
    csv: dinoReader,
    reads: '`gwapi import dino` reads DINO CSV (Grondwaterstanden_Put, …_1.csv)',
  }),
  fews: readFews,
};
