/**
 * A measurement's status. Its place in STATUSES is the code stored (measurements.status) and written
 * (Arrow's dictionary index); the importers and the operator commands write it, the endpoints read it.
 */
export const STATUSES = ['approved', 'provisional', 'rejected'] as const;
export type Status = (typeof STATUSES)[number];
/** The status of a measurement stored without one. */
export const DEFAULT_STATUS: Status = 'provisional';

/** The stored code of `status`. */
export const statusCode = (status: Status): number => STATUSES.indexOf(status);

/** The statuses as a message lists them: `approved, provisional or rejected`. */
export const STATUS_CHOICES = `${STATUSES.slice(0, -1).join(', ')} or ${STATUSES.at(-1)}`;
