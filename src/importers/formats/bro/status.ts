/**
 * BRO's review of a point as a stored status, and the order in which two points of one file at the same
 * time win: the same for GLD XML and BRO's CSV exports, so a tube's levels do not depend on the format.
 */
import { statusCode } from '../../../domain/status.js';

const APPROVED = statusCode('approved');
const PROVISIONAL = statusCode('provisional');
const REJECTED = statusCode('rejected');

/** An observation's review level (`mate beoordeling`, `status`) that makes `goedgekeurd` approved. */
export const FULLY_REVIEWED = 'volledigBeoordeeld';

/** Of two points of a file at one time, the higher review level wins: fully reviewed, provisional, the rest. */
export function reviewPriority(reviewLevel: string): number {
  return reviewLevel === FULLY_REVIEWED ? 2 : reviewLevel === 'voorlopig' ? 1 : 0;
}

/** `afgekeurd` is rejected, `goedgekeurd` in a fully reviewed observation approved, any other point provisional. */
export function broStatus(qualityControl: string, reviewLevel: string): number {
  if (qualityControl === 'afgekeurd') return REJECTED;
  return qualityControl === 'goedgekeurd' && reviewLevel === FULLY_REVIEWED ? APPROVED : PROVISIONAL;
}

/** The reasons the report counts BRO's skipped points under. */
export const MISSING_VALUE = 'missing value';
export const CONTROL_READING = 'control reading';
