/**
 * Corrections benchmark: `gwapi measurements status` and `gwapi measurements remove` of a month inside
 * history, as the compression policy leaves it on TimescaleDB (bench/lib/history.ts), against the same on
 * PostgreSQL: a month of the year's tube (1-minute data, 44,640 rows or so), and a month of one tube of
 * the 1,000 in a chunk (hourly, 720 rows or so). Each run takes another month (another tube of the
 * network), each found compressed before it is written; each write on a connection of its own, as each
 * command opens one.
 *
 *   BENCH_ENGINE=both npm run bench -- corrections [RUNS]     (3)
 */
import { type Instant, parseDateTime } from '../../src/domain/datetime.js';
import { removeMeasurements, setStatus } from '../../src/importers/measurements/corrections.js';
import { numberArguments } from '../../testkit/arguments.js';
import type { Engine } from '../../testkit/databaseServer.js';
import { machineLine } from '../../testkit/report.js';
import { requireEnginePrerequisites } from '../lib/engines.js';
import { historyOn, onEachEngine, timedOnItsOwn } from '../lib/history.js';

requireEnginePrerequisites();

const [RUNS] = numberArguments(3);

const WRITES = {
  status: 'status of a month of one tube (1-minute data)',
  remove: 'removal of a month of one tube (1-minute data)',
  networkStatus: 'status of a month of 1 of 1,000 tubes (hourly)',
  networkRemove: 'removal of a month of 1 of 1,000 tubes (hourly)',
};
type Write = keyof typeof WRITES;

const instant = (text: string): Instant => (parseDateTime(text) as { instant: Instant }).instant;
/** The month `month` of 2024 (1 to 12), [first day, first day of the next). */
const month = (n: number) => ({
  from: new Date(Date.UTC(2024, n - 1, 1)).toISOString(),
  to: new Date(Date.UTC(2024, n, 1)).toISOString(),
});

async function correct(engine: Engine): Promise<Record<Write, number[]>> {
  const { server, history } = await historyOn(engine, 'bench_corrections');
  const times: Record<Write, number[]> = { status: [], remove: [], networkStatus: [], networkRemove: [] };
  try {
    const timedIn = async (
      write: Write,
      { from, to }: { from: string; to: string },
      work: Parameters<typeof timedOnItsOwn>[1],
    ) => {
      await history.assertCompressed(from, to);
      times[write].push(await timedOnItsOwn(history.url, work));
    };
    const networkMonth = history.networkMonths;
    for (let run = 0; run < RUNS; run++) {
      // Two months apart, each write in chunks of its own; the network's tubes 97 apart.
      const statusMonth = month(2 + 2 * run);
      const removedMonth = month(3 + 2 * run);
      const interval = (m: { from: string; to: string }) => ({ from: instant(m.from), to: instant(m.to) });
      await timedIn('status', statusMonth, (sql) =>
        setStatus(sql, [history.year], interval(statusMonth), 'approved'),
      );
      await timedIn('remove', removedMonth, (sql) =>
        removeMeasurements(sql, history.year, interval(removedMonth)),
      );
      const tube = history.network[run * 97]!;
      const other = history.network[run * 97 + 1]!;
      await timedIn('networkStatus', networkMonth, (sql) =>
        setStatus(sql, [tube], interval(networkMonth), 'approved'),
      );
      await timedIn('networkRemove', networkMonth, (sql) =>
        removeMeasurements(sql, other, interval(networkMonth)),
      );
    }
  } finally {
    await server.stop();
  }
  return times;
}

console.log(`Corrections benchmark — ${await machineLine()}\n`);
await onEachEngine(WRITES, correct);
