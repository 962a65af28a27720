/** The network as CSV: the series' CSV writer with each line's tube identifier first. */
import { csvSeries } from './csv.js';
import type { NetworkRepresentation } from './networkWriter.js';

export const csvNetwork = (): NetworkRepresentation => csvSeries({ tubeColumn: true });
