/**
 * Conditional GET and HEAD (RFC 9110 §13): the validators a 200 carries, and whether a request's
 * If-None-Match or If-Modified-Since lets it be answered with 304. Tags are made from what the bytes
 * derive from (versions, parameters, coding), not from the bytes: a streamed series is not read to
 * answer a 304. Ours rather than jshttp's `fresh`, which answers "not fresh" to any request with
 * `Cache-Control: no-cache`, a cache's rule (RFC 9111) that an origin server must not apply, and reads
 * any text Date.parse takes as a date, where RFC 9110 wants an HTTP-date or nothing.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface Validators {
  /** An entity tag, quoted: `"…"`, or `W/"…"` where equal tags cannot promise equal bytes. */
  etag: string;
  /** When what the representation derives from last changed. */
  lastModified: Date;
}

/** Every 200 and 304 with validators says: keep it if you like, but ask (with them) before reusing it. */
export const CACHE_CONTROL = 'private, no-cache';

/** Characters of the tag's hash: 120 bits of SHA-256, base64url. */
const TAG_LENGTH = 20;

/**
 * A strong tag for the representation made from `inputs`: every value that shapes its bytes, the API
 * version among them. JSON keeps the list unambiguous (no two lists give the same text).
 */
export function entityTag(inputs: readonly (string | number | undefined)[]): string {
  const hash = createHash('sha256').update(JSON.stringify(inputs)).digest('base64url');
  return `"${hash.slice(0, TAG_LENGTH)}"`;
}

/** What a database's history adds to validators (src/db/walHistory.ts). */
export interface HistoryMark {
  /** Names the history: the same text on the same history only. */
  name: string;
  /** When the history's current line began: nothing read on another one was read later. */
  began: Date;
}

/**
 * Validators as read on the history `mark` names. A restored database counts its versions up again
 * from the past, and its change times lie before the copies clients took of what it undid: so a tag
 * also names the history, and Last-Modified is never before it began. Neither then matches a copy from
 * another history, and a client holding one gets the whole document once.
 */
export function onHistory(validators: Validators, mark: HistoryMark): Validators {
  const weak = validators.etag.startsWith('W/') ? 'W/' : '';
  return {
    etag: weak + entityTag([validators.etag, mark.name]),
    lastModified: validators.lastModified > mark.began ? validators.lastModified : mark.began,
  };
}

/** One element of If-None-Match: an entity tag, weak or not; its opaque part without quotes. */
const ENTITY_TAG = /[\t ]*(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[\t ]*(?:,|$)|[\t ]*(?:,|$)/y;

/**
 * The opaque tags of an If-None-Match value, `'*'`, or undefined for a value that is not one
 * (RFC 9110 §13.1.2), which is then ignored as if absent.
 */
export function parseIfNoneMatch(value: string): readonly string[] | '*' | undefined {
  if (value.trim() === '*') return '*';
  const tags: string[] = [];
  ENTITY_TAG.lastIndex = 0;
  while (ENTITY_TAG.lastIndex < value.length) {
    const at = ENTITY_TAG.lastIndex;
    const match = ENTITY_TAG.exec(value);
    // No progress: the rest is not a list of tags.
    if (!match || ENTITY_TAG.lastIndex === at) return undefined;
    if (match[1] !== undefined) tags.push(match[1]);
  }
  return tags.length > 0 ? tags : undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = MONTHS.join('|');
type DateParts = [day: string, month: string, year: number, hours: string, minutes: string, seconds: string];

/** A two-digit year more than 50 years ahead is in the past century (RFC 9110 §5.6.7). */
function fullYear(twoDigits: string): number {
  const year = 2000 + Number(twoDigits);
  return year > new Date().getUTCFullYear() + 50 ? year - 100 : year;
}

/** The three forms a recipient must accept (RFC 9110 §5.6.7): IMF-fixdate, RFC 850 and asctime. */
const HTTP_DATE_FORMS: [RegExp, (m: RegExpExecArray) => DateParts][] = [
  [
    new RegExp(
      `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\\d{2}) (${MONTH}) (\\d{4}) (\\d{2}):(\\d{2}):(\\d{2}) GMT$`,
    ),
    (m) => [m[1]!, m[2]!, Number(m[3]), m[4]!, m[5]!, m[6]!],
  ],
  [
    new RegExp(
      `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-(${MONTH})-(\\d{2}) (\\d{2}):(\\d{2}):(\\d{2}) GMT$`,
    ),
    (m) => [m[1]!, m[2]!, fullYear(m[3]!), m[4]!, m[5]!, m[6]!],
  ],
  [
    new RegExp(
      `^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (${MONTH}) ([ \\d]\\d) (\\d{2}):(\\d{2}):(\\d{2}) (\\d{4})$`,
    ),
    (m) => [m[2]!.trim(), m[1]!, Number(m[6]), m[3]!, m[4]!, m[5]!],
  ],
];

/** Milliseconds since the epoch of an HTTP-date, or undefined for anything else (an impossible date too). */
export function parseHttpDate(value: string): number | undefined {
  const text = value.trim();
  for (const [form, partsOf] of HTTP_DATE_FORMS) {
    const match = form.exec(text);
    if (!match) continue;
    const [day, month, year, hours, minutes, seconds] = partsOf(match);
    const ms = Date.UTC(
      year,
      MONTHS.indexOf(month),
      Number(day),
      Number(hours),
      Number(minutes),
      Number(seconds),
    );
    // Date.UTC rolls 31 Feb over into March and 24:00 into the next day: such a date is not one.
    const exact = new Date(ms).getUTCDate() === Number(day) && Number(minutes) < 60 && Number(seconds) < 60;
    return exact ? ms : undefined;
  }
  return undefined;
}

/** The part of a tag between its quotes, weak or not: what the weak comparison compares. */
const opaqueTag = (etag: string): string => etag.slice(etag.indexOf('"') + 1, -1);

/**
 * Whether If-None-Match is `*` or names `etag` (weak comparison); undefined when the field is absent
 * or malformed, which counts as absent.
 */
export function noneMatchHolds(field: string | undefined, etag: string): boolean | undefined {
  const tags = field === undefined ? undefined : parseIfNoneMatch(field);
  return tags === undefined ? undefined : tags === '*' || tags.includes(opaqueTag(etag));
}

const secondsOf = (ms: number): number => Math.floor(ms / 1000);

/** Last-Modified is never later than the response (RFC 9110 §8.8.2.1): another host's clock may be ahead. */
const notLaterThanNow = (date: Date): Date => (date.getTime() > Date.now() ? new Date() : date);

/**
 * Whether the request's preconditions say the client's copy is current (RFC 9110 §13.2.2, for GET and
 * HEAD): If-None-Match by weak comparison, or `*`; If-Modified-Since only without If-None-Match, at
 * one-second precision. A malformed field is ignored as if it were absent.
 *
 * `heldThroughMs` is for a read replica: the instant (the primary's clock) up to which the answer's
 * source holds every change. A tag names what the source holds, but a date does not: a client's copy
 * from a source further ahead may be newer than anything this one has. So If-Modified-Since counts only
 * when the source holds everything up to the end of the date's second.
 */
export function isNotModified(
  request: FastifyRequest,
  validators: Validators,
  heldThroughMs: number | undefined = Number.POSITIVE_INFINITY,
): boolean {
  const { 'if-none-match': noneMatch, 'if-modified-since': modifiedSince } = request.headers;
  const matched = noneMatchHolds(noneMatch, validators.etag);
  if (matched !== undefined) return matched;
  if (typeof modifiedSince !== 'string') return false;
  const since = parseHttpDate(modifiedSince);
  return (
    since !== undefined &&
    // Unclamped: a change dated after now (a clock ahead, a history begun this second) is no client's.
    secondsOf(validators.lastModified.getTime()) <= secondsOf(since) &&
    heldThroughMs !== undefined &&
    heldThroughMs >= since + 1000
  );
}

/** Whether a request carries a precondition that could make it a 304 (then validators are worth reading first). */
export const isConditional = (request: FastifyRequest): boolean =>
  request.headers['if-none-match'] !== undefined || request.headers['if-modified-since'] !== undefined;

/** ETag, Last-Modified (an HTTP-date: whole seconds) and Cache-Control, for a 200 and a 304 alike. */
export function setValidators(reply: FastifyReply, validators: Validators): FastifyReply {
  return reply
    .header('ETag', validators.etag)
    .header('Last-Modified', notLaterThanNow(validators.lastModified).toUTCString())
    .header('Cache-Control', CACHE_CONTROL);
}

/**
 * The 304: no body, and of the 200's headers only the validators, Cache-Control and Vary (which the
 * caller has set), besides those every response carries.
 */
export function sendNotModified(reply: FastifyReply, validators: Validators): FastifyReply {
  return setValidators(reply.code(304), validators).send();
}
