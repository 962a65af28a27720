/** A problem the operator can fix from its one-line message (bad input, missing setting); no stack trace. */
export class UserError extends Error {
  override name = 'UserError';
}
