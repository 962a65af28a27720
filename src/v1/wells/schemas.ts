/** Discovery: the wells and tubes a key may see (named in the OpenAPI document by wells/openapi.ts). */
import { z } from 'zod';
import { TubeIdentifier } from '../../engine/schemas.js';

/*
 * Objects another named schema refers to are strict (closed), as their JSON Schema is in a response
 * anyway (additionalProperties: false): zod-openapi renders them for the request side too, and an
 * open object there would give the document a second component (`…Output`) for the same shape.
 */
export const Tube = z
  .strictObject({
    identifier: TubeIdentifier,
    number: z.string().meta({
      description: 'Tube or filter number within its well, for people; not an identifier.',
      examples: ['1'],
    }),
  })
  .meta({ description: 'A tube (filter) of a well: the unit a series of measurements belongs to.' });

export const Well = z
  .strictObject({
    name: z.string().meta({ description: 'Name of the well, for people; never used to address data.' }),
    tubes: z
      .array(Tube)
      .min(1)
      .meta({
        description:
          'Only the tubes this key may read, in natural order of their numbers (`2` before `10`). Tubes ' +
          'the key may not read are left out without a trace.',
      }),
  })
  .meta({ description: 'A monitoring well with the tubes of it this key may read.' });

export const WellList = z.array(Well).meta({
  description:
    'Every well with at least one tube this key may read, in natural order of their names ' +
    '(`Well 2` before `Well 10`).',
});

export type Well = z.infer<typeof Well>;
