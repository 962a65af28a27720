/** The facts of version 1 of the contract that code outside /v1 also states. */

/** Where version 1 is served. */
export const V1_PREFIX = '/v1';

/** The contract's MAJOR.MINOR.PATCH, sent as `API-Version` on every response and in the OpenAPI `info`. */
export const API_VERSION = '1.2.1';
