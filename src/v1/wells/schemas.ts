/**
 * Discovery: the wells and tubes a key may see, as JSON and as GeoJSON (named in the OpenAPI document
 * by wells/openapi.ts).
 */
import { z } from 'zod';
import { GroundwaterLevelSeries, TubeIdentifier } from '../../engine/schemas.js';

/*
 * Objects another named schema refers to are strict (closed), as their JSON Schema is in a response
 * anyway (additionalProperties: false): zod-openapi renders them for the request side too, and an
 * open object there would give the document a second component (`…Output`) for the same shape.
 */

/** An elevation of a tube: present only when the operator stated it. */
const elevation = (description: string, example: number) =>
  z
    .number()
    .optional()
    .meta({
      description:
        `${description}, in the tube's \`unit\` relative to its \`verticalDatum\` (the scale of its ` +
        'measurements, so a level compares with it directly). Left out when unknown, never `null`.',
      examples: [example],
    });

export const Tube = z
  .strictObject({
    identifier: TubeIdentifier,
    number: z.string().meta({
      description: 'Tube or filter number within its well, for people; not an identifier.',
      examples: ['1'],
    }),
    unit: GroundwaterLevelSeries.shape.unit,
    verticalDatum: GroundwaterLevelSeries.shape.verticalDatum,
    groundLevel: elevation('The ground level at the well', 1.02),
    tubeTop: elevation('The top of the tube', 1.35),
    screenTop: elevation('The top of the screen (filter), above `screenBottom`', -8.5),
    screenBottom: elevation('The bottom of the screen (filter)', -9.5),
  })
  .meta({ description: 'A tube (filter) of a well: the unit a series of measurements belongs to.' });

/** A well's location: a GeoJSON Point geometry (RFC 7946), in WGS 84 longitude and latitude. */
export const Location = z
  .strictObject({
    type: z.literal('Point'),
    // Not a tuple: OpenAPI 3.1 renders one as prefixItems, which linters and generators read poorly.
    coordinates: z
      .array(z.number())
      .length(2)
      .meta({
        description:
          '`[longitude, latitude]` in WGS 84 decimal degrees: longitude within [-180, 180], latitude ' +
          'within [-90, 90] (the order of GeoJSON: x, then y).',
        examples: [[5.38763, 52.15616]],
      }),
  })
  .meta({
    description:
      'Where the well stands: a GeoJSON Point (RFC 7946) with `[longitude, latitude]` in WGS 84 decimal ' +
      'degrees.',
  });

const wellName = z
  .string()
  .meta({ description: 'Name of the well, for people; never used to address data.' });
const wellTubes = z
  .array(Tube)
  .min(1)
  .meta({
    description:
      'Only the tubes this key may read, in natural order of their numbers (`2` before `10`). Tubes ' +
      'the key may not read are left out without a trace.',
  });

export const Well = z
  .strictObject({
    name: wellName,
    tubes: wellTubes,
    location: Location.optional().meta({ description: 'Where the well stands; left out when unknown.' }),
  })
  .meta({ description: 'A monitoring well with the tubes of it this key may read.' });

export const WellList = z.array(Well).meta({
  description:
    'Every well with at least one tube this key may read, in natural order of their names ' +
    '(`Well 2` before `Well 10`).',
});

export const WellFeature = z
  .strictObject({
    type: z.literal('Feature'),
    geometry: Location.nullable().meta({ description: "The well's location, or `null` when unknown." }),
    properties: z.strictObject({ name: wellName, tubes: wellTubes }),
  })
  .meta({ description: 'A well as a GeoJSON Feature: its location, its name and its tubes.' });

export const WellFeatureCollection = z
  .strictObject({
    type: z.literal('FeatureCollection'),
    features: z
      .array(WellFeature)
      .meta({ description: 'One Feature per well, in the order of the JSON list.' }),
  })
  .meta({
    description:
      'Discovery as one GeoJSON FeatureCollection (RFC 7946), for GIS tools: the same wells and tubes as ' +
      'the JSON list, in the same order.',
  });

export type Tube = z.infer<typeof Tube>;
export type Well = z.infer<typeof Well>;
export type Location = z.infer<typeof Location>;
