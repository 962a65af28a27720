/** The answers of the network endpoint that the series endpoint does not give. */
import { ProblemError } from '../../http/problems/problems.js';

/** The message of a `changedSince` that this service did not issue to this key. */
export const TOKEN_NOT_ISSUED =
  'is not a sync token this service issued to this API key: send the Sync-Token of an earlier response, unchanged';

/** 410: the token is good, but what changed since it cannot be told as measurements. */
export const changesGone = () =>
  new ProblemError(
    410,
    'The changes since this sync token can no longer be told as measurements: what this API key may ' +
      'read has changed since, or the token is older than the history kept. Sync again without ' +
      'changedSince.',
  );

/** 410: the delta holds a removal, which only include=status can write (or, aggregated, an emptied bucket). */
export const removalsUntold = () =>
  new ProblemError(
    410,
    "Measurements that this sync token's copy may hold were removed since, or no longer pass the status " +
      'filter. A delta tells such a removal only with include=status, and an aggregated delta not at all ' +
      'when a bucket is left with no measurement. Sync again without changedSince.',
  );
