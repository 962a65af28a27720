/** The network endpoint's JSON body: a head of its own, then the series of the endpoint for one tube. */
import { z } from 'zod';
import { GroundwaterLevelSeries, SeriesHead } from './schemas.js';

/** The head's fields, taken from the series head so that they are described (and written) alike. */
const { from, to, aggregate } = SeriesHead.shape;

export const NetworkHead = z.object({
  from,
  to,
  aggregate,
  syncToken: z.string().meta({
    description:
      'The token of the snapshot this response was read from, as in the `Sync-Token` header: send it ' +
      'as `changedSince` to get only what was written since. Opaque, URL-safe, at most 200 characters.',
  }),
});
export type NetworkHead = z.infer<typeof NetworkHead>;

export const GroundwaterLevelNetwork = NetworkHead.extend({
  series: z.array(GroundwaterLevelSeries).meta({
    description:
      'Each element exactly the series the series endpoint gives for that tube with the same `from`, `to` ' +
      'and `aggregate`, in discovery order (wells by name, tubes by number, both natural). Every selected ' +
      'tube is listed, with `"measurements": []` when it has none, except with `changedSince`: then only ' +
      'tubes with a changed measurement are.',
  }),
}).meta({ description: 'The measurements of many tubes over one interval, read from one snapshot.' });
