/**
 * The series as `application/json`: a GroundwaterLevelSeries object whose `measurements` array is
 * written batch by batch, each batch by a serializer compiled at startup.
 */
import { z } from 'zod';
import { compileSerializer } from '../../http/jsonSchema.js';
import type { SeriesRepresentation } from './representation.js';
import { Measurement, SeriesHead } from './schemas.js';

const serializeHead = compileSerializer(SeriesHead);
const serializeMeasurements = compileSerializer(z.array(Measurement));

const COMMA = 0x2c;
const CLOSING = Buffer.from(']}');

/**
 * Each batch becomes one Buffer: the serializer's `[…]` is encoded once, then its brackets are left out
 * by a view, or its `[` overwritten with the `,` that separates it from the previous batch. The string
 * dies at once; slicing or concatenating it as a string would first flatten it into a second copy of
 * the batch that lives until the stream converts it.
 */
export const jsonSeries: SeriesRepresentation = {
  mediaType: 'application/json',
  head: (head) => Buffer.from(`${serializeHead(head).slice(0, -1)},"measurements":[`),
  batch(rows, first) {
    const batch = Buffer.from(serializeMeasurements(rows));
    if (first) return batch.subarray(1, -1);
    batch[0] = COMMA;
    return batch.subarray(0, -1);
  },
  close: () => CLOSING,
};
