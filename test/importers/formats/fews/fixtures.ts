/** The FEWS fixtures (test/importers/formats/fixtures/fews/) and what they state, for the reader's tests and the CLI's. */
import { join } from 'node:path';

export const fixture = (name: string) => join(import.meta.dirname, '..', 'fixtures', 'fews', name);

/** `lat`, `lon` FEWS itself writes for RD x 133623.0, y 454951.0, the point of PP-Lunetten-101. */
export const FEWS_LUNETTEN = { latitude: 52.082416488309036, longitude: 5.075337740730613 };

/**
 * The levels levels-mnap.xml gives PP-Lunetten-101: flags 0-5 and none provisional, 6-8 rejected, 9,
 * missVal and NaN left out; times at `<timeZone>` 1.0 in UTC; 0.6709999999999999 to 15 digits.
 */
export const LUNETTEN_LEVELS = [
  { observedAt: '2024-01-15T08:00:00Z', value: -0.414, status: 'provisional' },
  { observedAt: '2024-01-15T09:00:00Z', value: -0.412, status: 'provisional' },
  { observedAt: '2024-01-15T10:00:00Z', value: -0.41, status: 'provisional' },
  { observedAt: '2024-01-15T11:00:00Z', value: -0.409, status: 'provisional' },
  { observedAt: '2024-01-15T12:00:00Z', value: -0.408, status: 'provisional' },
  { observedAt: '2024-01-15T13:00:00Z', value: -0.407, status: 'provisional' },
  { observedAt: '2024-01-15T14:00:00Z', value: 0.671, status: 'rejected' },
  { observedAt: '2024-01-15T15:00:00Z', value: 12.5, status: 'rejected' },
  { observedAt: '2024-01-15T16:00:00Z', value: -3.2, status: 'rejected' },
  { observedAt: '2024-01-15T23:30:00Z', value: -0.401, status: 'provisional' },
];

/** Of Vleuten peilbuis 2: its GW.meting series (`m NAP`), then its GW.handmeting (`m+NAP`). */
export const VLEUTEN_LEVELS = [
  { observedAt: '2024-01-15T08:00:00Z', value: 1.03, status: 'provisional' },
  { observedAt: '2024-01-15T09:00:00Z', value: 1.021, status: 'provisional' },
  { observedAt: '2024-01-15T11:00:00Z', value: 1.017, status: 'provisional' },
];
