/**
 * The soak's account of what its clients saw: responses by kind of request and status, and every
 * unexpected thing (an unexpected status, a body that is not what it should be, a cut response, a socket
 * error, a stall), counted by what it was, with the first few messages kept to show.
 */

export interface Tally {
  /** A response of `kind` with `status` (also a deliberate leave: counted by its status). */
  response(kind: string, status: number): void;
  /** Something no well-behaved server does; `what` is short and has no key in it. */
  error(kind: string, what: string): void;
  /** Responses and errors so far: a snapshot to diff against later. */
  snapshot(): TallySnapshot;
}

export interface TallySnapshot {
  /** `kind status` → count */
  responses: Map<string, number>;
  /** `kind: what` → count */
  errors: Map<string, number>;
  firstErrors: string[];
}

const KEPT_MESSAGES = 10;

export function createTally(): Tally {
  const responses = new Map<string, number>();
  const errors = new Map<string, number>();
  const firstErrors: string[] = [];
  const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  return {
    response: (kind, status) => add(responses, `${kind} ${status}`),
    error(kind, what) {
      add(errors, `${kind}: ${what.split('\n')[0]!.slice(0, 80)}`);
      if (firstErrors.length < KEPT_MESSAGES)
        firstErrors.push(`${new Date().toISOString()} ${kind}: ${what}`);
    },
    snapshot: () => ({
      responses: new Map(responses),
      errors: new Map(errors),
      firstErrors: [...firstErrors],
    }),
  };
}

export const total = (map: Map<string, number>, match: (key: string) => boolean = () => true) =>
  [...map].reduce((sum, [key, value]) => (match(key) ? sum + value : sum), 0);

/** What happened between two snapshots. */
export function since(later: TallySnapshot, earlier: TallySnapshot): TallySnapshot {
  const diff = (a: Map<string, number>, b: Map<string, number>) =>
    new Map([...a].map(([key, value]) => [key, value - (b.get(key) ?? 0)]));
  return {
    responses: diff(later.responses, earlier.responses),
    errors: diff(later.errors, earlier.errors),
    firstErrors: later.firstErrors.slice(earlier.firstErrors.length),
  };
}
