/**
 * The demo network: a few wells in typical Dutch settings, with fixed tube identifiers so that links and
 * scripts written against one demo keep working against the next. Levels and elevations are in m
 * relative to NAP; locations near the places the wells are named after.
 */
import type { RegistryLocation, RegistryTube, RegistryWell } from '../importers/registry/registry.js';

/** The seasonal shape of a tube's level: a yearly sine around a mean. */
export interface LevelModel {
  /** Mean level, m NAP. */
  mean: number;
  /** Half the seasonal range, m. */
  amplitude: number;
  /** Day of the year (1–365) of the seasonal high; deeper filters lag behind the shallow ones. */
  highDay: number;
}

/** Where a tube sits in the ground, m NAP. */
type Elevations = Required<Pick<RegistryTube, 'groundLevel' | 'tubeTop' | 'screenTop' | 'screenBottom'>>;

export interface DemoTube {
  identifier: string;
  number: string;
  level: LevelModel;
  elevations: Elevations;
}

export interface DemoWell {
  name: string;
  location: RegistryLocation;
  tubes: DemoTube[];
}

/** A tube of a well whose ground level is `groundLevel`, its top 0.5 m above, screened over one metre. */
const screened = (groundLevel: number, screenTop: number): Elevations => ({
  groundLevel,
  tubeTop: Math.round((groundLevel + 0.5) * 100) / 100,
  screenTop,
  screenBottom: screenTop - 1,
});

export const DEMO_WELLS: readonly DemoWell[] = [
  {
    // Higher sandy ground in Brabant: far above sea level, a wide seasonal swing.
    name: 'Deurne Peelweg',
    location: { longitude: 5.8453, latitude: 51.4412 },
    tubes: [
      {
        identifier: 'f7fe0acd-8d88-48f4-9382-afda92ef31a5',
        number: '1',
        level: { mean: 24.35, amplitude: 0.55, highDay: 70 },
        elevations: screened(26.1, 21),
      },
    ],
  },
  {
    // Slowly responding ice-pushed ridge of the Veluwe.
    name: 'Ermelo Horsterweg',
    location: { longitude: 5.6412, latitude: 52.3017 },
    tubes: [
      {
        identifier: '9027da9d-bcba-4890-91a8-c017d8767a50',
        number: '1',
        level: { mean: 9.12, amplitude: 0.25, highDay: 120 },
        elevations: screened(14.6, 5),
      },
    ],
  },
  {
    // A peat polder with three filters: shallow, middle and deep aquifer, each at its own level (upward
    // seepage makes the deeper levels differ), with the seasonal swing damped and delayed with depth.
    name: 'Lopik Schoonhovenseweg',
    location: { longitude: 4.9284, latitude: 51.9562 },
    tubes: [
      {
        identifier: '9b57bf4a-6d7a-40d2-9b60-0ee86e7d386f',
        number: '1',
        level: { mean: -1.42, amplitude: 0.35, highDay: 55 },
        elevations: screened(-0.9, -3),
      },
      {
        identifier: '9a1b8137-431f-417c-b558-e88bae525d0f',
        number: '2',
        level: { mean: -1.58, amplitude: 0.22, highDay: 75 },
        elevations: screened(-0.9, -12),
      },
      {
        identifier: 'f635df2f-bba4-4893-b640-a33459fd738a',
        number: '3',
        level: { mean: -1.93, amplitude: 0.09, highDay: 105 },
        elevations: screened(-0.9, -28),
      },
    ],
  },
  {
    // Reclaimed land of Flevoland, well below sea level.
    name: 'Zeewolde Gooiseweg',
    location: { longitude: 5.4587, latitude: 52.3381 },
    tubes: [
      {
        identifier: 'c3f095a9-e34d-4f7a-a0b7-504d38977b94',
        number: '1',
        level: { mean: -4.85, amplitude: 0.3, highDay: 60 },
        elevations: screened(-3.7, -8),
      },
    ],
  },
];

/** The tube the demo key may not read, so that the hidden-tube rule can be seen (404, left out of discovery). */
export const HIDDEN_DEMO_TUBE = DEMO_WELLS[2]!.tubes[2]!;

/** The tube the printed example request reads. */
export const EXAMPLE_DEMO_TUBE = DEMO_WELLS[2]!.tubes[0]!;

export const DEMO_TUBES: readonly DemoTube[] = DEMO_WELLS.flatMap((well) => well.tubes);

/** The demo network as a registry (unit m, vertical datum NAP: the defaults). */
export function demoRegistry(): RegistryWell[] {
  return DEMO_WELLS.map((well) => ({
    name: well.name,
    location: well.location,
    tubes: well.tubes.map(({ identifier, number, elevations }) => ({ identifier, number, ...elevations })),
  }));
}
