/** The readers of `gwapi import <format>`, by command; each format's reader adds its own entry. */
import { UserError } from '../../errors.js';
import { gldCsvReader } from './bro/gldCsv.js';
import { gldXmlReader } from './bro/gldXml.js';
import { gmwXmlReader } from './bro/gmwXml.js';
import { dinoReader } from './dino/dinoCsv.js';
import { readFews } from './fews/fewsReader.js';
import { byFirstByte } from './firstByte.js';
import type { ReaderFactory } from './reader.js';

export const FORMAT_COMMANDS = ['bro-gmw', 'bro-gld', 'dino', 'fews'] as const;
export type FormatCommand = (typeof FORMAT_COMMANDS)[number];

/** `bro-gld` reads XML and BRO's CSV exports alike: byFirstByte (firstByte.ts) chooses. */
const READERS: Partial<Record<FormatCommand, ReaderFactory>> = {
  'bro-gmw': gmwXmlReader,
  'bro-gld': byFirstByte({ xml: gldXmlReader, csv: gldCsvReader }),
  dino: dinoReader,
  fews: readFews,
};

export function readerOf(command: FormatCommand): ReaderFactory {
  const reader = READERS[command];
  if (!reader) throw new UserError(`gwapi import ${command}: this version has no reader of the format yet`);
  return reader;
}
