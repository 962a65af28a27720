/**
 * The features of the three collections as zod schemas: what the OpenAPI document describes, and what
 * the pages' serializers are compiled from (features.ts), so the two cannot disagree.
 */
import { z } from 'zod';
import { STATUSES } from '../../engine/schemas.js';
import type { CollectionId } from './query.js';

export const Point = z
  .strictObject({ type: z.literal('Point'), coordinates: z.array(z.number()).length(2) })
  .nullable()
  .meta({ description: "The well's location, `[longitude, latitude]` in CRS84; `null` when unknown." });

const nullableNumber = (description: string) => z.number().nullable().meta({ description });
const text = (description: string) => z.string().meta({ description });
const status = z.enum(STATUSES).meta({ description: 'The status of the measurement.' });

export const PROPERTIES: Record<CollectionId, z.ZodObject> = {
  tubes: z.strictObject({
    tubeIdentifier: text('The tube identifier, as discovery lists it.'),
    wellName: text('The name of the well.'),
    tubeNumber: text('The tube number within its well.'),
    unit: text('The unit of its measurements.'),
    verticalDatum: text('The vertical datum of its measurements.'),
    groundLevel: nullableNumber('The ground level; `null` when unknown.'),
    tubeTop: nullableNumber('The top of the tube; `null` when unknown.'),
    screenTop: nullableNumber('The top of the screen; `null` when unknown.'),
    screenBottom: nullableNumber('The bottom of the screen; `null` when unknown.'),
  }),
  latest: z.strictObject({
    tubeIdentifier: text('The tube identifier.'),
    wellName: text('The name of the well.'),
    tubeNumber: text('The tube number within its well.'),
    observedAt: text('When the latest measurement was taken (RFC 3339, UTC).'),
    value: z.number().meta({ description: 'The level.' }),
    status,
    unit: text('The unit of the value.'),
    verticalDatum: text('The vertical datum of the value.'),
  }),
  measurements: z.strictObject({
    tubeIdentifier: text('The tube identifier.'),
    observedAt: text('When the measurement was taken (RFC 3339, UTC), as the series gives it.'),
    value: z.number().meta({ description: 'The level.' }),
    status,
    unit: text('The unit of the value.'),
    verticalDatum: text('The vertical datum of the value.'),
  }),
};

export const FEATURE_ID: Record<CollectionId, string> = {
  tubes: 'The tube identifier.',
  latest: 'The tube identifier.',
  measurements: '`{tubeIdentifier}:{observedAt}`.',
};
