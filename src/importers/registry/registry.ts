/**
 * `gwapi import registry`: upserts wells (by name) and tubes (by identifier) in one transaction, through
 * the one writer of both (registryWriter.ts). Wells and tubes the registry does not mention are left
 * alone, and those it mentions are stated whole (a field left out takes its default, or becomes unknown).
 */
import type { Sql } from '../../db/connect.js';
import { begin } from '../../db/transaction.js';
import { type CheckedRegistry, checkRegistry } from './registryCheck.js';
import {
  type RegistryIssue,
  type RegistryPath,
  RegistryRejected,
  type RegistryWell,
} from './registryTypes.js';
import { type TubeStatement, writeWellsAndTubes } from './registryWriter.js';

export type { RegistryLocation, RegistryTube, RegistryWell } from './registryTypes.js';
export { RegistryRejected } from './registryTypes.js';

export interface RegistryCounts {
  wells: number;
  tubes: number;
}

/** Checks and writes the registry; throws `RegistryRejected` (and writes nothing) when it breaks a rule. */
export async function upsertRegistry(sql: Sql, wells: readonly RegistryWell[]): Promise<RegistryCounts> {
  const checked = checkRegistry(wells);
  if (!checked.ok) throw new RegistryRejected(checked.issues);
  await writeRegistry(sql, checked.wells);
  return { wells: checked.wells.length, tubes: checked.wells.reduce((n, well) => n + well.tubes.length, 0) };
}

async function writeRegistry(sql: Sql, wells: CheckedRegistry): Promise<void> {
  const places = wells.flatMap((well, w) => well.tubes.map((_, i) => ({ w, i })));
  // A listed well or tube is stated whole: a location or an elevation the file leaves out becomes unknown.
  const tubes = wells.flatMap((well) =>
    well.tubes.map(
      (tube): TubeStatement => ({
        ...tube,
        wellName: well.name,
        groundLevel: tube.groundLevel ?? null,
        tubeTop: tube.tubeTop ?? null,
        screenTop: tube.screenTop ?? null,
        screenBottom: tube.screenBottom ?? null,
      }),
    ),
  );
  await begin(sql, async (tx) => {
    // Concurrent registry imports would each pass the clash check and then collide; one at a time.
    // Readers are not blocked.
    await tx`lock table wells, tubes in share row exclusive mode`;
    const conflicts = await writeWellsAndTubes(
      tx,
      wells.map((well) => ({ name: well.name, location: well.location ?? null })),
      tubes,
    );
    if (conflicts.length > 0) {
      throw new RegistryRejected(
        conflicts.map(({ tube, field, reason }): RegistryIssue => {
          const { w, i } = places[tube]!;
          const path: RegistryPath = [w, 'tubes', i, field];
          return { path, reason: field === 'number' ? `${reason}, which this file does not list` : reason };
        }),
      );
    }
  });
}
