/** Paths of the API as its clients request them. */
export const WELLS_PATH = '/v1/groundwater-monitoring-wells';

/** A tube's series in [from, to); the instants encoded, so an offset's `+` stays a plus. */
export const seriesPath = (tubeIdentifier: string, from: string, to: string) =>
  `/v1/groundwater-monitoring-tubes/${tubeIdentifier}/measurements?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
