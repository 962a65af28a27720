/**
 * The drill's data and keys: a registry of wells, some tubes with 30 days of 10-minute data, one tube
 * with a year of it (long enough to hold a stream open unread), keys for the load that see every tube,
 * and keys that hold streams on the replica that is killed.
 */

import type { Sql } from '../../src/db/connect.js';
import { vacuumMeasurements } from '../../src/importers/measurements/measurements.js';
import { seriesPath } from '../apiPaths.js';
import { addKey, addRegularSeries, addWell } from '../fixtures.js';
import { dayAfterStart, SERIES_START } from '../seriesFixture.js';
import type { DrillTarget, DrillTube } from './drillLoad.js';

const WELLS = 20;
const TUBES_WITH_DATA = 8;
const DATA_DAYS = 30;
const STEP = '10 minutes';
/** The held year's step: its body must exceed what loopback's socket buffers take, or a paused stream ends. */
const HELD_STEP = '1 minute';

export interface DrillFixture {
  tubes: DrillTube[];
  wells: number;
  loadKeys: string[];
  /** Keys that each hold CONCURRENCY_LIMIT streams of `holdPath` open on one replica ('' without holders). */
  holders: { key: string; keyId: string }[];
  holdPath: string;
}

export async function addDrillFixture(
  sql: Sql,
  counts: { keys: number; holders: number },
): Promise<DrillFixture> {
  const tubeIds: number[] = [];
  const tubes: DrillTube[] = [];
  for (let well = 1; well <= WELLS; well++) {
    const added = await addWell(sql, `Drill well ${well}`, [
      { number: '1' },
      { number: '2' },
      { number: '3' },
    ]);
    tubeIds.push(...added.map((tube) => tube.id));
    if (tubes.length < TUBES_WITH_DATA) {
      const [tube] = added;
      await addRegularSeries(sql, tube!.id, SERIES_START, dayAfterStart(DATA_DAYS), STEP);
      tubes.push({ identifier: tube!.identifier, from: SERIES_START, to: dayAfterStart(DATA_DAYS) });
    }
  }
  // A year of minutes takes a while to write: only for drills that hold streams.
  const [held] = counts.holders > 0 ? await addWell(sql, 'Drill year', [{ number: '1' }]) : [];
  if (held) await addRegularSeries(sql, held.id, SERIES_START, dayAfterStart(366), HELD_STEP);
  await vacuumMeasurements(sql);
  const loadKeys: string[] = [];
  for (let i = 0; i < counts.keys; i++) loadKeys.push((await addKey(sql, { tubeIds })).key);
  const holders = [];
  for (let i = 0; i < counts.holders; i++) holders.push(await addKey(sql, { tubeIds: [held!.id] }));
  const holdPath = held ? seriesPath(held.identifier, SERIES_START, dayAfterStart(366)) : '';
  return {
    tubes,
    wells: WELLS,
    loadKeys,
    holders,
    holdPath,
  };
}

export const drillTarget = (base: string, fixture: DrillFixture): DrillTarget => ({
  base,
  tubes: fixture.tubes,
  wells: fixture.wells,
});
