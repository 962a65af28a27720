/** The network as CSV: the series' CSV writer with each line's tube identifier first. */
import { csvSeries } from '../measurements/csvSeries.js';
import type { NetworkRepresentation } from './representation.js';

export const csvNetwork = (): NetworkRepresentation => csvSeries({ tubeColumn: true });
