/**
 * The soak's data and keys: the year-long tube (seriesFixture.ts), 40 more wells of 3 tubes, 10 of those
 * tubes with 30 days of 10-minute data, and a key per simulated client, with grants that make the
 * answer each must get certain (how many wells its discovery lists).
 */

import type { Sql } from '../../src/db/connect.js';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import {
  addSeriesFixture,
  dayAfterStart,
  MINUTES_PER_DAY,
  SERIES_START,
} from '../../testkit/seriesFixture.js';
import type { SoakTube } from './soakClients.js';

const WELLS = 40;
const TUBES_WITH_DATA = 10;
const DATA_DAYS = 30;
const TEN_MINUTES_PER_DAY = 144;

export interface SoakKey {
  key: string;
  keyId: string;
}

export interface SoakFixture {
  yearTube: SoakTube;
  /** The tubes the day clients read: the year and the 30-day ones. */
  dayTubes: SoakTube[];
  discovery: (SoakKey & { expectedWells: number })[];
  day: SoakKey[];
  yearKeys: SoakKey[];
  greedy: SoakKey & { expectedWells: number };
  crowd: SoakKey;
  /** Every key, for the check that no concurrency slot is left behind. */
  all: SoakKey[];
}

export async function addSoakFixture(
  sql: Sql,
  clients: { discovery: number; day: number; year: number },
): Promise<SoakFixture> {
  const year = await addSeriesFixture(sql);
  const yearTube: SoakTube = { identifier: year.identifier, perDay: MINUTES_PER_DAY, days: 366 };
  /** Every tube's well, to count the wells a set of grants reaches. */
  const wellOf = new Map<number, number>([[year.tubeId, 0]]);
  const otherTubes: { id: number; identifier: string }[] = [];
  for (let well = 1; well <= WELLS; well++) {
    const tubes = await addWell(sql, `Well ${well}`, [{ number: '1' }, { number: '2' }, { number: '10' }]);
    for (const tube of tubes) {
      wellOf.set(tube.id, well);
      otherTubes.push(tube);
    }
  }
  // The first tube of every fourth well: data spread over the registry.
  const withData = otherTubes.filter((_, index) => index % 12 === 0).slice(0, TUBES_WITH_DATA);
  for (const tube of withData) {
    await addRegularSeries(sql, tube.id, SERIES_START, dayAfterStart(DATA_DAYS), '10 minutes');
  }
  await sql`vacuum analyze measurements`;

  const allWells = WELLS + 1;
  const granted = async (tubeIds: number[]) => ({
    ...(await addKey(sql, { tubeIds })),
    expectedWells: new Set(tubeIds.map((id) => wellOf.get(id))).size,
  });
  const discovery = [{ ...(await addKey(sql, { allTubes: true })), expectedWells: allWells }];
  // Each further discovery client sees every n-th tube: a different list, and a cached body, per client.
  for (let n = 2; discovery.length < clients.discovery; n++) {
    discovery.push(await granted(otherTubes.filter((_, index) => index % n === 0).map((tube) => tube.id)));
  }
  const dayTubeIds = [year.tubeId, ...withData.map((tube) => tube.id)];
  const day = [];
  for (let i = 0; i < clients.day; i++) day.push(await addKey(sql, { tubeIds: dayTubeIds }));
  const yearKeys = [];
  for (let i = 0; i < clients.year; i++) yearKeys.push(await addKey(sql, { tubeIds: [year.tubeId] }));
  const greedy = { ...(await addKey(sql, { allTubes: true })), expectedWells: allWells };
  const crowd = await addKey(sql, { tubeIds: [year.tubeId] });
  return {
    yearTube,
    dayTubes: [
      yearTube,
      ...withData.map((tube) => ({
        identifier: tube.identifier,
        perDay: TEN_MINUTES_PER_DAY,
        days: DATA_DAYS,
      })),
    ],
    discovery,
    day,
    yearKeys,
    greedy,
    crowd,
    all: [...discovery, ...day, ...yearKeys, greedy, crowd],
  };
}
