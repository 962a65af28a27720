/**
 * A reader double of the format contract (src/importers/formats/reader.ts) for the write path's tests,
 * one statement a line, fields apart by spaces:
 *
 *   tube IDENTIFIER WELL NUMBER [field=value…]   (location=LON,LAT; a value `null` states it unknown)
 *   level IDENTIFIER TIME VALUE STATUS [PRIORITY]
 *   skip COUNT REASON…
 *   refuse FIELD REASON…
 */
import { type Instant, parseDateTime } from '../../../src/domain/datetime.js';
import { STATUSES, type Status, statusCode } from '../../../src/domain/status.js';
import {
  FileRefused,
  type LevelReader,
  type LevelSink,
  type ReaderFactory,
  type StatedTube,
} from '../../../src/importers/formats/reader.js';

export const readLevelDouble: ReaderFactory = (_file: string, sink: LevelSink): LevelReader => {
  let lines = 0;
  let partial = '';
  const instant: { seconds: number; micros: number } = { seconds: 0, micros: 0 };
  const line = (text: string) => {
    const number = ++lines;
    const [kind, ...fields] = text.trim().split(/\s+/);
    if (kind === undefined || kind === '') return;
    if (kind === 'tube') {
      const [identifier, wellName, tubeNumber, ...stated] = fields;
      const tube: StatedTube = {
        identifier: identifier!,
        wellName: wellName!,
        number: tubeNumber!,
        place: { line: number },
      };
      for (const pair of stated) {
        const [name, value] = pair.split('=') as [keyof StatedTube, string];
        const parsed =
          value === 'null'
            ? null
            : name === 'location'
              ? { longitude: Number(value.split(',')[0]), latitude: Number(value.split(',')[1]) }
              : name === 'unit' || name === 'verticalDatum'
                ? value
                : Number(value);
        Object.assign(tube, { [name]: parsed });
      }
      sink.tube(tube);
    } else if (kind === 'level') {
      const [identifier, time, value, status, priority] = fields;
      const parsed = parseDateTime(time!);
      if (!parsed.ok) throw new FileRefused({ line: number }, 'time', parsed.reason);
      const at: Instant = parsed.instant;
      instant.seconds = at.seconds;
      instant.micros = at.micros;
      if (!(STATUSES as readonly string[]).includes(status!))
        throw new FileRefused({ line: number }, 'status', 'unknown');
      sink.level(
        number,
        identifier!,
        instant,
        Number(value),
        statusCode(status as Status),
        Number(priority ?? 0),
      );
    } else if (kind === 'skip') {
      const [count, ...reason] = fields;
      sink.skipPoints(reason.join(' '), Number(count));
    } else if (kind === 'refuse') {
      const [field, ...reason] = fields;
      throw new FileRefused({ line: number, path: 'double/refusal' }, field!, reason.join(' '));
    } else {
      throw new FileRefused({ line: number }, 'statement', `unknown statement ${kind}`);
    }
  };
  return {
    write(chunk) {
      const text = partial + chunk.toString();
      const parts = text.split('\n');
      partial = parts.pop()!;
      for (const part of parts) line(part);
    },
    end() {
      if (partial !== '') line(partial);
      partial = '';
    },
    get lines() {
      return lines;
    },
  };
};
