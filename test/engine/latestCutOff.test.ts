/**
 * A latest document cut off by a late error never reads as a whole, shorter one, in any format: its
 * chunks (the shared document writer with the cut-off guard, src/engine/write/document.ts) up to a
 * failure after the first, second or last batch are refused by the format's readers (JSON and GeoJSON
 * by JSON.parse, Arrow by apache-arrow and polars), and a CSV cut off ends inside a line, never in the
 * CRLF that only the close writes; the whole document reads as whole, every row.
 */
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import t from 'tap';
import { emptyBatch, type MeasurementBatch } from '../../src/engine/batch.js';
import { BATCH_SIZE } from '../../src/engine/document.js';
import { STATUSES } from '../../src/engine/schemas.js';
import { CutOffGuard, documentChunks } from '../../src/engine/write/document.js';
import { LATEST_FORMAT_LIST } from '../../src/engine/write/formats.js';
import type { LatestTube, LatestWriter } from '../../src/engine/write/writer.js';

const TUBES = 2 * BATCH_SIZE + 321;

const tubes: LatestTube[] = Array.from({ length: TUBES }, (_, i) => ({
  tubeIdentifier: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  unit: i % 3 === 0 ? 'cm' : 'm',
  verticalDatum: 'NAP',
  wellName: `Well ${Math.floor(i / 3)}`,
  tubeNumber: String((i % 3) + 1),
  location: i % 2 === 0 ? [5 + i / 1e4, 52] : undefined,
}));

/** The rows of every tube, one each, in batches; the status with `withStatus`. */
function batches(withStatus: boolean): MeasurementBatch[] {
  const all: MeasurementBatch[] = [];
  for (let start = 0; start < TUBES; start += BATCH_SIZE) {
    const length = Math.min(BATCH_SIZE, TUBES - start);
    const batch = emptyBatch(withStatus ? 'rawWithStatus' : 'raw', length);
    for (let i = 0; i < length; i++) {
      batch.tube[i] = start + i;
      batch.observedAt[i] = 1_704_067_200_000_000 + (start + i) * 1_000_001;
      batch.value[i] = ((start + i) % 97) / 8 - 3.25;
      if (batch.status) batch.status[i] = (start + i) % 3;
    }
    batch.length = length;
    all.push(batch);
  }
  return all;
}

/** The chunks the document writer yields until the batches end, or until a failure after `failAfter`. */
async function chunks(writer: LatestWriter, withStatus: boolean, failAfter?: number) {
  const guard = new CutOffGuard(writer);
  const all = batches(withStatus);
  async function* source() {
    for (const [i, batch] of all.entries()) {
      if (i === failAfter) throw new Error('the connection is lost');
      yield batch;
    }
    // After the last batch: the commit that ends the snapshot fails.
    if (failAfter === all.length) throw new Error('the connection is lost');
  }
  const written: Buffer[] = [];
  const layout = { opening: writer.open(tubes), tubes: [], everyTube: false };
  try {
    for await (const chunk of documentChunks(layout, source(), writer, guard)) written.push(chunk);
  } catch {
    return { body: Buffer.concat(written), whole: false };
  }
  written.push(guard.close(writer.close()));
  return { body: Buffer.concat(written), whole: true };
}

/** Whether the format's readers take `body` as a whole document, and how many rows they read. */
function read(format: string, body: Buffer): number {
  switch (format) {
    case 'json':
      return JSON.parse(body.toString()).length;
    case 'geojson':
      return JSON.parse(body.toString()).features.length;
    case 'arrow': {
      const rows = tableFromIPC(body).numRows;
      if (pl.readIPCStream(body).height !== rows) throw new Error('polars reads another number of rows');
      return rows;
    }
    default: {
      const text = body.toString();
      if (!text.endsWith('\r\n')) throw new Error('a CSV without its last CRLF is cut off');
      return text.split('\r\n').length - 2;
    }
  }
}

t.test('a latest document cut off reads as no whole document, in every format', async (t) => {
  for (const format of LATEST_FORMAT_LIST) {
    for (const withStatus of [false, true]) {
      const name = `${format.name}${withStatus ? ' with the status' : ''}`;
      const writer = () => format.latest(withStatus ? { statuses: STATUSES } : {});
      const whole = await chunks(writer(), withStatus);
      t.ok(whole.whole);
      t.equal(read(format.name, whole.body), TUBES, `${name}: the whole document, every row`);
      for (const failAfter of [1, 2, 3]) {
        const cut = await chunks(writer(), withStatus, failAfter);
        t.notOk(cut.whole);
        t.ok(cut.body.length > 0 && cut.body.length < whole.body.length, `${name}: begun, and short`);
        t.ok(whole.body.subarray(0, cut.body.length).equals(cut.body), `${name}: what came is the start`);
        t.throws(() => read(format.name, cut.body), `${name}: refused when cut after batch ${failAfter}`);
      }
    }
  }
});
