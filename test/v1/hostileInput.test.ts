/**
 * Hostile input, generated: at least 10,000 requests to the series endpoint, as many to the network
 * endpoint with its `tubes`, `changedSince` and `bbox` on top of the series' parameters, and as many to
 * discovery with `format` (json, geojson) and `bbox`, and as many to latest with `tubes`, `bbox`,
 * `status`, `include` and `format` (json, csv, arrow, geojson), over bare sockets
 * (methods, headers and encodings no client library would send) with random and near-valid date-times,
 * offsets, percent-encodings (valid, invalid, double, %00, UTF-8, overlong), duplicate, unknown and huge
 * parameters, `format`, `status` and `include` values and odd Accept lists, odd identifiers, odd methods and headers. Every answer must come within a deadline, be a
 * 2xx/4xx in the contract's shape, and be the status an independent model of the contract predicts:
 * parser errors, then the path, Host and Expect, route (404/405), key (401), parameters (400), access
 * (403/404), and on the network endpoint a token not issued to the key (400), listed tubes (404), a
 * token whose changes are gone (410); on latest, listed tubes (404) and its body in the format asked.
 * Limits are lifted so that no 429 masks anything.
 *
 * The model decodes queries with URLSearchParams (not the server's parser) and writes the expected
 * series with Date; it classifies a decoded date-time with parseDateTime, whose own properties
 * (test/domain/datetime.property.test.ts) check it against Date.
 */
import { METHODS, STATUS_CODES } from 'node:http';
import { type Table, tableFromIPC } from 'apache-arrow';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { AGGREGATE_SECONDS, AGGREGATES, type Aggregate } from '../../src/contract.js';
import { type Instant, microsBetween, parseDateTime } from '../../src/domain/datetime.js';
import { STATUSES, type Status } from '../../src/engine/schemas.js';
import {
  FORMAT_NAMES,
  type FormatName,
  LATEST_FORMAT_NAMES,
  type LatestFormatName,
} from '../../src/engine/write/writer.js';
import { addKey, addMeasurements, addWell, revokeKey, rollUpDays } from '../../testkit/fixtures.js';
import { startApi, type TestApi } from '../helpers/api.js';
import {
  addMicros,
  instantArb,
  microsArb,
  offsetArb,
  styleArb,
  utcText,
  writeInstant,
} from '../helpers/dateTimes.js';
import { refreshLatest } from '../helpers/latest.js';
import { exchange, field, type RawResponse } from '../helpers/rawHttp.js';

/**
 * Requests per endpoint, in batches of CONCURRENCY sent at once. GWAPI_FUZZ_REQUESTS asks for a longer
 * run; GWAPI_FUZZ_SEED replays a failure (fast-check prints the seed, and the path as GWAPI_FUZZ_PATH)
 * with GWAPI_FUZZ_ENDPOINT naming the endpoint that failed.
 */
const REQUESTS = Math.max(10_000, Number(process.env.GWAPI_FUZZ_REQUESTS ?? 0));
const REPLAY = process.env.GWAPI_FUZZ_SEED
  ? { seed: Number(process.env.GWAPI_FUZZ_SEED), path: process.env.GWAPI_FUZZ_PATH }
  : {};
const CONCURRENCY = 8;
/** Far above any honest answer on a busy machine, far below a hang. */
const DEADLINE_MS = 15_000;
/** Node's default limit on the request line and header fields together. */
const MAX_HEADER_BYTES = 16 * 1024;
const MAX_INTERVAL_MICROS = 366 * 86_400 * 1_000_000;
const PREFIX = '/v1/groundwater-monitoring-tubes/';
const NETWORK_PATH = '/v1/groundwater-monitoring-measurements';
const WELLS_PATH = '/v1/groundwater-monitoring-wells';
const LATEST_PATH = '/v1/groundwater-monitoring-measurements/latest';
/** Where the granted tube's well stands: what a box holds or not. */
const WELL_LOCATION = [5, 52] as const;
/** Discovery's formats, in the order that breaks a tie of Accept's q-values. */
const DISCOVERY_FORMATS = ['json', 'geojson'] as const;
type DiscoveryFormat = (typeof DISCOVERY_FORMATS)[number];

interface World {
  granted: string;
  hidden: string;
  keys: { reader: string; nothing: string; revoked: string };
  /** The granted tube's rows: instant, the value as JSON writes it, and the status. */
  rows: { at: Instant; value: number; status: Status }[];
  /**
   * Sync tokens of the network endpoint: the reader's current one (nothing written since), the
   * reader's from before its view changed (410), and one of another key reading the same tube.
   */
  tokens: { current: string; gone: string; otherKey: string };
}

/** What the model expects: one status, or any of a few where Node's limits make it a matter of bytes. */
interface Expected {
  statuses: number[];
  /** On 400 from the parameters: the parameters `errors` must name. */
  errorKeys?: string[];
  /** On 200: the interval the series must state. */
  interval?: {
    from: Instant;
    to: Instant;
    aggregate?: Aggregate;
    /** `status`: only these; undefined for every status. */
    statuses?: string[];
    /** `include=status`. */
    withStatus?: boolean;
  };
  /** On 404 of the network endpoint: the listed identifier, as sent, that the detail names. */
  notFound?: string;
  /** On 200 of the network endpoint: a delta since the current token, so no series. */
  delta?: boolean;
  /** On 200 of the network endpoint or discovery: a `bbox` that leaves the granted tube's well out. */
  outsideBox?: boolean;
  /** On 200: the format `format` or Accept asks for. */
  format?: LatestFormatName;
  /** On 200 of latest: the statuses that pass (codes), and whether each row carries its status. */
  latest?: { passing: number[]; withStatus: boolean };
}

interface Generated {
  method: string;
  version: string;
  path: string;
  query: string;
  headers: [string, string][];
  body: string;
  /** Everything the model needs that the bytes do not say directly. */
  traits: Traits;
}

type TubeKind = 'granted' | 'hidden' | 'unknown' | 'malformed' | 'badEncoding' | 'tooLong';
type KeyKind = 'reader' | 'nothing' | 'invalid';
type MethodKind = 'served' | 'other' | 'unknownToken' | 'connect' | 'invalid';

/**
 * The series of one tube, the network endpoint with `tubes` and `changedSince`, discovery, or latest
 * with `tubes`, `status` and `include` (and an interval it ignores).
 */
type Endpoint = 'series' | 'network' | 'discovery' | 'latest';

interface Traits {
  endpoint: Endpoint;
  tube: TubeKind;
  key: KeyKind;
  methodKind: MethodKind;
  /** The path is not the endpoint's (wrong case, extra slash, missing segment). */
  otherRoute: boolean;
  hostMissing: boolean;
  unmetExpectation: boolean;
  /** A header line the HTTP parser must refuse. */
  malformedHeader: boolean;
  /** The elements of the Accept fields, if any were sent. */
  accept: AcceptElement[] | undefined;
}

// ---------------------------------------------------------------------------------------------------
// Generators

const hexCase = (text: string, upper: boolean) => (upper ? text.toUpperCase() : text.toLowerCase());

/** Percent-encodes each character with probability given by the mask (valid UTF-8, random hex case). */
function percentEncode(text: string, mask: boolean[], upperHex: boolean): string {
  return [...text]
    .map((char, i) =>
      mask[i % Math.max(1, mask.length)]
        ? hexCase(
            [...new TextEncoder().encode(char)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
            upperHex,
          )
        : char,
    )
    .join('');
}

/** Characters a URL must not carry raw, so encodeURIComponent's set plus a few it leaves alone. */
const mustEncode = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);

const badEscapes = ['%', '%G1', '%zz', '%E0%A4', '%C0%AF', '%ED%A0%80', '%F8%88%80%80%80', '%FF', '%0'];

/** A query value as text on the wire, from its decoded form. */
const encodedValue = (value: string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(mustEncode(value)) },
    // `:` left raw, as curl users write it; `+` encoded.
    { weight: 6, arbitrary: fc.constant(mustEncode(value).replace(/%3A/gi, ':')) },
    // `+` raw: it arrives as a space.
    { weight: 1, arbitrary: fc.constant(mustEncode(value).replace(/%2B/gi, '+').replace(/%3A/gi, ':')) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), fc.boolean())
        .map(([mask, upper]) =>
          percentEncode(value, mask, upper).replace(/[^A-Za-z0-9%._~:-]/gu, mustEncode),
        ),
    },
    { weight: 1, arbitrary: fc.constant(mustEncode(mustEncode(value))) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...badEscapes), fc.nat()).map(([bad, at]) => {
        const wire = mustEncode(value);
        const i = wire.length === 0 ? 0 : at % wire.length;
        return wire.slice(0, i) + bad + wire.slice(i);
      }),
    },
  );

/** Edits that keep a value near-valid: one to three characters inserted, replaced or removed. */
const mutated = (text: string, alphabet = '0123456789-:+.TtZz x\u0663é\u0000%') =>
  fc
    .array(fc.tuple(fc.nat(), fc.constantFrom(...alphabet), fc.integer({ min: 0, max: 2 })), {
      minLength: 1,
      maxLength: 3,
    })
    .map((edits) => {
      let out = text;
      for (const [at, char, kind] of edits) {
        const i = at % (out.length + 1);
        out = out.slice(0, i) + (kind === 2 ? '' : char) + out.slice(kind === 0 ? i : i + 1);
      }
      return out;
    });

/** A decoded date-time value: written from an instant, near-valid, or anything at all. */
const dateTimeValue = (instant: Instant) =>
  fc.oneof(
    { weight: 14, arbitrary: fc.tuple(offsetArb, styleArb).map(([o, s]) => writeInstant(instant, o, s)) },
    {
      weight: 2,
      arbitrary: fc.tuple(offsetArb, styleArb).chain(([o, s]) => mutated(writeInstant(instant, o, s))),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.constantFrom('', '2024-01-01', '2024-01-01T00:00:00', 'now', '0', '-1') },
  );

/** Interval lengths around every boundary of the contract. */
const lengthArb = fc.oneof(
  { weight: 14, arbitrary: fc.integer({ min: 1, max: MAX_INTERVAL_MICROS }) },
  { weight: 1, arbitrary: fc.constantFrom(MAX_INTERVAL_MICROS, MAX_INTERVAL_MICROS + 1, 1, 0, -1) },
  { weight: 1, arbitrary: fc.integer({ min: MAX_INTERVAL_MICROS + 1, max: 20 * MAX_INTERVAL_MICROS }) },
  { weight: 1, arbitrary: fc.integer({ min: -MAX_INTERVAL_MICROS, max: 0 }) },
);

/** Mostly where the data is (2023 to 2025), sometimes anywhere in 0001 to 9999. */
const fromArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      seconds: fc.integer({ min: 1_672_531_200, max: 1_735_689_600 }),
      micros: microsArb,
    }),
  },
  { weight: 1, arbitrary: instantArb },
);

/** `format` pairs: mostly none, else a value (valid, encoded or junk), or the parameter repeated. */
const formatValueArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('csv', 'json', 'arrow') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'c%73v',
      '%6A%73on',
      'arr%6Fw',
      'CSV',
      'Json',
      'ARROW',
      'xml',
      '',
      'csv%20',
      'csv%00',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(...badEscapes) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map(mustEncode) },
);
const formatArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant([] as [string, string][]) },
  {
    weight: 4,
    arbitrary: fc
      .array(fc.tuple(fc.constantFrom('format', 'f%6Frmat'), formatValueArb), { minLength: 1, maxLength: 3 })
      .map((pairs) => pairs as [string, string][]),
  },
);

/**
 * A parameter given none, one, or (rarely) two or three times, in these weights, its name sometimes
 * percent-encoded.
 */
const pairs = (name: string, value: fc.Arbitrary<string>, weights: { absent: number; once: number }) =>
  fc
    .oneof(
      { weight: weights.absent, arbitrary: fc.constant(0) },
      { weight: weights.once, arbitrary: fc.constant(1) },
      { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) },
    )
    .chain((count) =>
      fc.array(
        fc.tuple(
          fc.oneof(
            { weight: 10, arbitrary: fc.constant(name) },
            { weight: 1, arbitrary: fc.constant(percentEncode(name, [false, true], false)) },
          ),
          value,
        ),
        { minLength: count, maxLength: count },
      ),
    );

/** `status` values: lists of statuses in any order, else near-valid or junk lists. */
const statusValueArb = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.shuffledSubarray([...STATUSES], { minLength: 1 }).map((list) => list.join(',')),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'Approved',
      'removed',
      '',
      'approved,',
      ',rejected',
      'approved,,rejected',
      'provisional,provisional',
      'approved rejected',
      'approved;rejected',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

/** `include` values: `status`, else near-valid or junk lists. */
const includeValueArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant('status') },
  {
    weight: 3,
    arbitrary: fc.constantFrom('Status', 'status,status', '', 'status,', 'value', 'status,value'),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

/** The query string: from and to (missing, once or repeated), format, other parameters, empty pairs. */
const queryArb = fc
  .tuple(fromArb, lengthArb)
  .filter(([from, length]) => {
    const to = addMicros(from, length);
    return to.seconds > -62_135_596_800 + 86_400 && to.seconds < 253_402_300_799 - 86_400;
  })
  .chain(([from, length]) => {
    const to = addMicros(from, length);
    const occurrences = (name: string, instant: Instant) =>
      pairs(name, dateTimeValue(instant).chain(encodedValue), { absent: 1, once: 24 });
    const extra = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.tuple(
          fc.constantFrom(
            'From',
            'TO',
            'x',
            '__proto__',
            'constructor',
            'toString',
            'from[]',
            'to.',
            'api_key',
            '',
          ),
          fc.string({ maxLength: 20 }).map(mustEncode),
        ),
      },
      {
        weight: 8,
        arbitrary: fc.tuple(
          fc.string({ minLength: 1, maxLength: 10 }).map(mustEncode),
          fc.string({ maxLength: 5 }).map(mustEncode),
        ),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(
          fc.constant('huge'),
          fc.integer({ min: 1000, max: 20_000 }).map((n) => 'a'.repeat(n)),
        ),
      },
    );
    const manyExtras = fc.oneof(
      { weight: 25, arbitrary: fc.array(extra, { maxLength: 3 }) },
      {
        weight: 1,
        arbitrary: fc
          .integer({ min: 100, max: 3000 })
          .map((n) => Array.from({ length: n }, (_, i) => [`p${i}`, '1'] as [string, string])),
      },
    );
    // Mostly absent, as a 1.0.0 client sends it; else valid, junk near a valid value, or repeated.
    const aggregates = fc.oneof(
      { weight: 12, arbitrary: fc.constant([]) },
      { weight: 4, arbitrary: fc.constantFrom(...AGGREGATES).map((v) => [['aggregate', v]]) },
      {
        weight: 3,
        arbitrary: fc
          .oneof(
            fc.constantFrom(...AGGREGATES).map((v) => v.toLowerCase()),
            fc.constantFrom('PT30M', 'P1W', 'P1M', 'PT60M', 'P1D ', ' P1D', 'P1D,PT1H', '').map(mustEncode),
            // Encoded already: a NUL, and `P1D` with its digit percent-encoded (valid once decoded).
            fc.constantFrom('%00', 'P%31D'),
            fc.string({ maxLength: 12 }).map(mustEncode),
          )
          .map((v) => [['aggregate', v]]),
      },
      {
        weight: 1,
        arbitrary: fc
          .array(fc.constantFrom(...AGGREGATES), { minLength: 2, maxLength: 3 })
          .map((vs) => vs.map((v) => ['aggregate', v])),
      },
    ) as fc.Arbitrary<[string, string][]>;
    return fc
      .tuple(
        occurrences('from', from),
        occurrences('to', to),
        aggregates,
        formatArb,
        manyExtras,
        fc.boolean(),
        fc.nat(),
        fc.boolean(),
        pairs('status', statusValueArb.chain(encodedValue), { absent: 20, once: 6 }),
        pairs('include', includeValueArb.chain(encodedValue), { absent: 20, once: 6 }),
      )
      .map(([froms, tos, aggregate, formats, extras, bareKey, shuffle, emptyPairs, statuses, includes]) => {
        const pairs = [...froms, ...tos, ...aggregate, ...formats, ...extras, ...statuses, ...includes];
        // A fixed rotation rather than a shuffle: order is irrelevant to the model, only to the parser.
        const rotated = pairs.map((_, i) => pairs[(i + shuffle) % pairs.length]!);
        const parts = rotated.map(([k, v]) => (bareKey && v === '' ? k : `${k}=${v}`));
        if (emptyPairs) parts.splice(shuffle % (parts.length + 1), 0, '', '');
        return parts.length === 0 && shuffle % 2 === 0 ? '' : `?${parts.join('&')}`;
      });
  });

const UUID_CHARS = /[0-9a-f-]/;

/** An identifier as a client may write it: lower, upper or mixed case, or partly percent-encoded. */
const spelled = (id: string) =>
  fc
    .tuple(
      fc.constantFrom('lower', 'upper', 'mixed', 'encoded'),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
      fc.boolean(),
    )
    .map(([style, mask, upper]) => {
      if (style === 'lower') return id;
      if (style === 'upper') return id.toUpperCase();
      if (style === 'mixed')
        return [...id].map((c, i) => (mask[i % mask.length] ? c.toUpperCase() : c)).join('');
      return percentEncode(id, mask, upper);
    });

/** The tube segment of the path, raw, with what it is. */
const tubeArb = (world: World): fc.Arbitrary<{ text: string; kind: TubeKind }> => {
  const unknownId = fc.uuid().map((id) => id.toLowerCase());
  return fc.oneof(
    { weight: 14, arbitrary: spelled(world.granted).map((text) => ({ text, kind: 'granted' as const })) },
    { weight: 2, arbitrary: spelled(world.hidden).map((text) => ({ text, kind: 'hidden' as const })) },
    { weight: 2, arbitrary: unknownId.chain(spelled).map((text) => ({ text, kind: 'unknown' as const })) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.constant(`{${world.granted}}`),
          fc.constant(`%20${world.granted}`),
          fc.constant(`${world.granted}%20`),
          fc.constant(`${world.granted}%00`),
          fc.constant(world.granted.slice(0, 35)),
          fc.constant(`${world.granted}0`),
          fc.constant(world.granted.replace(/-/g, '')),
          fc.constant(`urn:uuid:${world.granted}`),
          fc.constant('%E2%82%AC'),
          fc.constant('%F0%9F%92%A7'),
          fc.constant('%00'),
          fc.constant('a%2Fb'),
          fc.constant('..'),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(mustEncode),
          fc.integer({ min: 37, max: 999 }).map((n) => 'f'.repeat(n)),
        )
        .filter((text) => text !== '.' && !(text.length === 36 && [...text].every((c) => UUID_CHARS.test(c))))
        .map((text) => ({ text, kind: 'malformed' as const })),
    },
    {
      weight: 1,
      arbitrary: fc
        // Not `%` or `%0`, which the identifier's own hex digits can complete into a valid escape.
        .tuple(fc.constantFrom(...badEscapes.filter((e) => e.length > 2)), fc.nat())
        .map(([bad, at]) => {
          const i = at % 37;
          return {
            text: world.granted.slice(0, i) + bad + world.granted.slice(i),
            kind: 'badEncoding' as const,
          };
        }),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 1001, max: 4000 })
        .map((n) => ({ text: 'x'.repeat(n), kind: 'tooLong' as const })),
    },
  );
};

/**
 * `tubes` on the wire: readable, hidden, unknown and malformed identifiers in any spelling, empty items,
 * duplicates, lists of 200 and 201 items, commas raw or encoded.
 */
const tubesValueArb = (world: World) => {
  const item = fc.oneof(
    { weight: 8, arbitrary: spelled(world.granted) },
    { weight: 2, arbitrary: spelled(world.hidden) },
    { weight: 2, arbitrary: fc.uuid().chain(spelled) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.constantFrom(' ', 'null', world.granted.slice(0, 35), `${world.granted} `, `{${world.granted}}`),
          fc.string({ maxLength: 12 }),
        )
        .map(mustEncode),
    },
  );
  const decoded = (text: string) => new URLSearchParams(`v=${text}`).get('v')!.toLowerCase();
  const lists = fc.oneof(
    { weight: 8, arbitrary: item.map((text) => [text]) },
    { weight: 4, arbitrary: fc.uniqueArray(item, { minLength: 2, maxLength: 4, selector: decoded }) },
    // Duplicates in any spelling, and empty items anywhere.
    { weight: 2, arbitrary: fc.array(fc.oneof(item, fc.constant('')), { minLength: 2, maxLength: 4 }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(199, 200), fc.boolean())
        .chain(([n, repeated]) =>
          fc
            .uniqueArray(fc.uuid(), { minLength: n, maxLength: n })
            .map((ids) => [world.granted, ...ids, ...(repeated ? [world.granted.toUpperCase()] : [])]),
        ),
    },
  );
  return fc
    .tuple(lists, fc.constantFrom(',', ',', ',', '%2C', '%2c'))
    .map(([items, comma]) => items.join(comma));
};

/** `changedSince` on the wire: issued tokens, altered or truncated ones, another key's, junk, huge. */
const changedSinceValueArb = (world: World) =>
  fc
    .oneof(
      { weight: 12, arbitrary: fc.constantFrom(world.tokens.current, world.tokens.gone) },
      { weight: 1, arbitrary: fc.constant(world.tokens.otherKey) },
      { weight: 3, arbitrary: mutated(world.tokens.current, 'AQgw09_-+/=.%') },
      {
        weight: 1,
        arbitrary: fc.nat().map((n) => world.tokens.current.slice(0, n % world.tokens.current.length)),
      },
      { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
      { weight: 1, arbitrary: fc.integer({ min: 150, max: 6000 }).map((n) => 'A'.repeat(n)) },
    )
    .chain(encodedValue);

/** A coordinate as text: a plain or odd decimal, in range or near its edges, or junk. */
const coordinateText = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -1900, max: 1900 }).map((n) => String(n / 10)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('5', '52', '5.0', '+5', '-0', '.5', '5.', '5e0', '52E0', '90', '-180'),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', ' 5', '5 ', 'NaN', 'Infinity', '1e999', '0x5', '5,', '٥', 'five', '5%00'),
  },
);

/** `bbox` decoded: boxes around the well, beside it, on its edge, and near-valid or junk ones. */
const bboxValueArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '4,51,6,53',
      '5,52,5,52',
      '-180,-90,180,90',
      '5,51,6,52',
      '0,0,1,1',
      '5.000001,52,6,53',
      '4,51,4.999999,53',
    ),
  },
  {
    weight: 4,
    arbitrary: fc.array(coordinateText, { minLength: 3, maxLength: 5 }).map((items) => items.join(',')),
  },
  { weight: 1, arbitrary: fc.constantFrom('5,0,4,1', '0,2,1,1', '0,0,181,1', '0,-91,1,1', '', ',,,') },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

/** The network endpoint's query: the series' parameters, then `tubes`, `changedSince` and `bbox`. */
const networkQueryArb = (world: World) =>
  fc
    .tuple(
      queryArb,
      pairs('tubes', tubesValueArb(world), { absent: 6, once: 6 }),
      pairs('changedSince', changedSinceValueArb(world), { absent: 6, once: 6 }),
      pairs('bbox', bboxValueArb.chain(encodedValue), { absent: 8, once: 4 }),
    )
    .map(([query, tubes, since, bbox]) => {
      const parts = [...tubes, ...since, ...bbox].map(([k, v]) => `${k}=${v}`);
      if (parts.length === 0) return query;
      return `${query === '' ? '?' : `${query}&`}${parts.join('&')}`;
    });

/** `format` of discovery: mostly none, else its formats, the measurements' or junk, or repeated. */
const discoveryFormatArb = fc.oneof(
  { weight: 10, arbitrary: fc.constant([] as [string, string][]) },
  {
    weight: 6,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.constantFrom('format', 'f%6Frmat'),
          fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom(...DISCOVERY_FORMATS) },
            {
              weight: 1,
              arbitrary: fc.constantFrom('GeoJSON', 'geo%6Ason', 'geojson%20', 'geo+json', 'geo%2Bjson'),
            },
            { weight: 1, arbitrary: formatValueArb },
          ),
        ),
        { minLength: 1, maxLength: 3 },
      )
      .map((pairs) => pairs as [string, string][]),
  },
);

/** Discovery's query: `format`, `bbox`, and parameters it ignores (the measurements' among them). */
const discoveryQueryArb = fc
  .tuple(
    discoveryFormatArb,
    pairs('bbox', bboxValueArb.chain(encodedValue), { absent: 6, once: 6 }),
    fc.array(
      fc.tuple(
        fc.constantFrom('from', 'tubes', 'aggregate', 'x', '__proto__', 'Bbox', 'FORMAT'),
        fc.string({ maxLength: 8 }).map(mustEncode),
      ),
      { maxLength: 3 },
    ),
    fc.nat(),
  )
  .map(([formats, bbox, extras, shuffle]) => {
    const all = [...formats, ...bbox, ...extras];
    const rotated = all.map((_, i) => all[(i + shuffle) % all.length]!);
    return rotated.length === 0 ? '' : `?${rotated.map(([k, v]) => `${k}=${v}`).join('&')}`;
  });

/** A list of `known` names as a client may get it wrong: unknown, empty or repeated items, other cases. */
const namesValueArb = (known: readonly string[], near: readonly string[]) => {
  const item = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...known) },
    { weight: 2, arbitrary: fc.constantFrom(...near, '', ' ') },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
  return fc
    .tuple(fc.array(item, { minLength: 1, maxLength: 4 }), fc.constantFrom(',', ',', ',', '%2C'))
    .map(([items, comma]) => items.map(mustEncode).join(comma));
};

/** `format` of latest: its four formats mostly, else junk near them, or repeated. */
const latestFormatArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant([] as [string, string][]) },
  {
    weight: 6,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.constant('format'),
          fc.oneof(
            { weight: 8, arbitrary: fc.constantFrom(...LATEST_FORMAT_NAMES) },
            {
              weight: 1,
              arbitrary: fc.constantFrom('GeoJSON', 'geo+json', 'geojson%20', 'ge%6Fjson', 'xml', ''),
            },
          ),
        ),
        { minLength: 1, maxLength: 2 },
      )
      .map((pairs) => pairs as [string, string][]),
  },
);

/**
 * Latest's query: `tubes`, `bbox`, `status`, `include` and `format`, among parameters it ignores (an
 * interval, an aggregate, a token, junk), rotated.
 */
const latestQueryArb = (world: World) =>
  fc
    .tuple(
      pairs('tubes', tubesValueArb(world), { absent: 6, once: 6 }),
      pairs('status', namesValueArb(STATUSES, ['Approved', 'removed', 'approved ', 'rejected,']), {
        absent: 4,
        once: 8,
      }),
      pairs('include', namesValueArb(['status'], ['Status', 'unit', 'status,status']), {
        absent: 4,
        once: 8,
      }),
      latestFormatArb,
      pairs('bbox', bboxValueArb.chain(encodedValue), { absent: 8, once: 4 }),
      fc.array(
        fc.tuple(
          fc.constantFrom('from', 'to', 'aggregate', 'changedSince', 'x'),
          fc.string({ maxLength: 12 }).map(mustEncode),
        ),
        { maxLength: 3 },
      ),
      fc.nat(),
    )
    .map(([tubes, status, include, formats, bbox, ignored, shuffle]) => {
      const all = [...tubes, ...status, ...include, ...formats, ...bbox, ...ignored];
      const rotated = all.map((_, i) => all[(i + shuffle) % all.length]!);
      return rotated.length === 0 ? '' : `?${rotated.map(([k, v]) => `${k}=${v}`).join('&')}`;
    });

const OTHER_METHODS = METHODS.filter((m) => !['GET', 'HEAD', 'CONNECT'].includes(m));

const methodArb = fc.oneof(
  { weight: 30, arbitrary: fc.constant({ method: 'GET', kind: 'served' as MethodKind }) },
  { weight: 3, arbitrary: fc.constant({ method: 'HEAD', kind: 'served' as MethodKind }) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(...OTHER_METHODS).map((method) => ({ method, kind: 'other' as MethodKind })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('get', 'Get', 'FOO', 'G3T', 'QUERYX')
      .map((method) => ({ method, kind: 'unknownToken' as MethodKind })),
  },
  { weight: 1, arbitrary: fc.constant({ method: 'CONNECT', kind: 'connect' as MethodKind }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('GE(T', '<GET>', 'G\u00c9T', 'GET\u0000')
      .map((method) => ({ method, kind: 'invalid' as MethodKind })),
  },
);

/** The X-API-Key field(s): which key the server should find, if any. */
const keyArb = (
  world: World,
  endpoint: Endpoint,
): fc.Arbitrary<{ lines: [string, string][]; kind: KeyKind }> => {
  const name = fc.constantFrom('X-API-Key', 'x-api-key', 'X-API-KEY', 'x-Api-kEy');
  const padded = (value: string) => fc.constantFrom(value, ` ${value}`, `${value} `, `\t${value}\t`);
  const invalid = fc.oneof(
    fc.constant(''),
    fc.constant(world.keys.revoked),
    fc.constant(`${world.keys.reader}x`),
    fc.constant(world.keys.reader.slice(0, -1)),
    fc.constant(world.keys.reader.slice(3)),
    fc.constant(world.keys.reader.toUpperCase()),
    fc.constant(`Bearer ${world.keys.reader}`),
    fc.constant(`${world.keys.reader}\u00e9`),
    fc.constant('gw_\u00ff\u00fe'),
    fc
      .uint8Array({ minLength: 32, maxLength: 32 })
      .map((bytes) => `gw_${Buffer.from(bytes).toString('base64url')}`),
    fc.integer({ min: 100, max: 12_000 }).map((n) => `gw_${'A'.repeat(n)}`),
  );
  return fc.oneof(
    {
      weight: 20,
      arbitrary: fc
        .tuple(name, padded(world.keys.reader))
        .map((line) => ({ lines: [line], kind: 'reader' as const })),
    },
    {
      // More often on the network endpoint, where a token is a 400 for this key before its 403.
      weight: endpoint === 'network' ? 3 : 1,
      arbitrary: fc
        .tuple(name, padded(world.keys.nothing))
        .map((line) => ({ lines: [line], kind: 'nothing' as const })),
    },
    { weight: 1, arbitrary: fc.constant({ lines: [] as [string, string][], kind: 'invalid' as const }) },
    {
      weight: 2,
      arbitrary: fc.tuple(name, invalid).map((line) => ({ lines: [line], kind: 'invalid' as const })),
    },
    {
      // Two fields: Node joins them with a comma, and a joined pair is no key.
      weight: 1,
      arbitrary: fc
        .tuple(name, name, fc.constantFrom(world.keys.reader, world.keys.nothing, 'x'))
        .map(([a, b, second]) => ({
          lines: [
            [a, world.keys.reader],
            [b, second],
          ] as [string, string][],
          kind: 'invalid' as const,
        })),
    },
  );
};

/**
 * The ranges of the Accept elements generated, and how specifically each matches the two formats (2 the
 * type itself, 1 its `type/*`, 0 `*\/*`); a range without `/` is no media range and matches neither.
 */
const ACCEPT_RANGES: Record<string, Partial<Record<LatestFormatName, number>>> = {
  'text/csv': { csv: 2 },
  'TEXT/CSV': { csv: 2 },
  'application/json': { json: 2 },
  'Application/JSON': { json: 2 },
  'application/vnd.apache.arrow.stream': { arrow: 2 },
  'Application/Vnd.Apache.Arrow.Stream': { arrow: 2 },
  'application/vnd.apache.arrow.file': {},
  'application/geo+json': { geojson: 2 },
  'Application/Geo+JSON': { geojson: 2 },
  'text/*': { csv: 1 },
  'application/*': { json: 1, arrow: 1, geojson: 1 },
  '*/*': { json: 0, csv: 0, arrow: 0, geojson: 0 },
  'text/html': {},
  'application/problem+json': {},
  'image/png': {},
  csv: {},
  '*': {},
  '': {},
};

/** Parameters of an element, and the weight they give it: a q outside RFC 9110's qvalue weighs 0. */
const ACCEPT_PARAMETERS: Record<string, number> = {
  '': 1,
  ';q=1': 1,
  ';q=0': 0,
  ';q=0.5': 0.5,
  ';q=0.500': 0.5,
  ';Q=0.9': 0.9,
  ';q=0.001': 0.001,
  ';q=1.5': 0,
  ';q=abc': 0,
  ';q=': 0,
  ';charset=utf-8': 1,
  ';header=present;q=0.7': 0.7,
  ';;': 1,
};

interface AcceptElement {
  range: string;
  q: number;
}

/** One element of an Accept list as a client might write it, with what it means. */
const acceptElementArb = fc
  .tuple(
    fc.constantFrom(...Object.keys(ACCEPT_RANGES)),
    fc.constantFrom(...Object.keys(ACCEPT_PARAMETERS)),
    fc.constantFrom('', ' ', '\t'),
  )
  .map(([range, parameters, space]) => ({
    text: `${space}${range}${parameters.replaceAll(';', `${space};${space}`)}${space}`,
    element: { range, q: ACCEPT_PARAMETERS[parameters]! },
  }));

/** Accept fields (one or two, which Node joins with a comma) of up to 6 elements each. */
const acceptArb = fc.array(fc.array(acceptElementArb, { minLength: 1, maxLength: 6 }), {
  minLength: 1,
  maxLength: 2,
});

/** Fields that change framing, host, key or format: generated on purpose elsewhere, never by chance. */
const FRAMING = new Set([
  'accept',
  'host',
  'content-length',
  'transfer-encoding',
  'expect',
  'x-api-key',
  'connection',
  'upgrade',
]);

/** If-Modified-Since values: before every change (a 200), and after every change (a 304). */
const LONG_AGO = 'Thu, 01 Jan 1970 00:00:00 GMT';
const FAR_FUTURE = 'Fri, 31 Dec 9999 23:59:59 GMT';

/**
 * Whether the request's preconditions make a readable series a 304, as RFC 9110 §13.2.2 reads,
 * modelled apart from the server's parser: no generated tag is the series' own, so only `*` matches;
 * If-Modified-Since counts only without a well-formed If-None-Match (a malformed one is ignored).
 */
function notModified(headers: [string, string][]): boolean {
  const valuesOf = (name: string) =>
    headers.filter(([n]) => n.toLowerCase() === name).map(([, value]) => value.trim());
  // Node joins repeated If-None-Match fields with ", " and keeps the first If-Modified-Since.
  const noneMatch = valuesOf('if-none-match');
  const joined = noneMatch.length > 0 ? noneMatch.join(', ') : undefined;
  const tagList = /^(?:(?:W\/)?"[^"]*")?(?:[ \t]*,[ \t]*(?:(?:W\/)?"[^"]*")?)*[ \t]*$/;
  if (joined === '*') return true;
  if (joined !== undefined && /"/.test(joined) && tagList.test(joined)) return false;
  return valuesOf('if-modified-since')[0] === FAR_FUTURE;
}

/** Other header fields, and a body: what clients, proxies and attackers add. */
const extraHeadersArb = fc.array(
  fc.oneof(
    {
      weight: 12,
      arbitrary: fc.constantFrom<[string, string]>(
        ['Accept-Encoding', 'gzip, br'],
        ['Accept-Encoding', 'gzip'],
        ['Accept-Encoding', 'br;q=0.5, gzip;q=0.9'],
        ['Accept-Encoding', 'x-gzip, identity;q=0'],
        ['Accept-Encoding', '*;q=0'],
        ['Accept-Encoding', 'q=,;;,br;q=NaN'],
        ['Accept-Language', '\u00e9\u00e8'],
        ['Connection', 'keep-alive'],
        ['Connection', 'close'],
        ['Connection', 'Upgrade'],
        ['Upgrade', 'websocket'],
        ['X-Forwarded-For', '1.2.3.4, ,,garbage'],
        ['X-Forwarded-Host', 'evil.example'],
        ['Range', 'bytes=0-10'],
        ['If-None-Match', '*'],
        ['If-None-Match', '"nope"'],
        ['If-None-Match', 'W/"nope", "other"'],
        ['If-None-Match', '"unterminated'],
        ['If-Modified-Since', 'yesterday'],
        ['If-Modified-Since', LONG_AGO],
        ['If-Modified-Since', FAR_FUTURE],
        ['Cookie', 'a=b; c'],
        ['Authorization', 'Bearer x'],
        ['Content-Type', 'application/json'],
        ['Expect', '100-continue'],
        ['Origin', 'null'],
        ['X-Request-Id', 'chosen-by-client'],
      ),
    },
    {
      weight: 6,
      arbitrary: fc.tuple(
        fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/).filter((name) => !FRAMING.has(name.toLowerCase())),
        fc.stringMatching(/^[\x20-\x7e]{0,60}$/),
      ),
    },
    { weight: 2, arbitrary: fc.tuple(fc.constant('X-Latin1'), fc.stringMatching(/^[\x80-\xff]{1,20}$/)) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 8_000, max: 40_000 })
        .map((n): [string, string] => ['X-Huge', 'h'.repeat(n)]),
    },
    {
      weight: 1,
      // 10 KB of tags, or of junk: parsed in linear time, and never a 5xx.
      arbitrary: fc
        .tuple(fc.constantFrom('"a", ', 'W/"', '",', 'x'), fc.integer({ min: 2_000, max: 10_000 }))
        .map(([part, n]): [string, string] => ['If-None-Match', part.repeat(Math.ceil(n / part.length))]),
    },
  ),
  { maxLength: 3 },
);

const bodyArb = fc.oneof(
  { weight: 10, arbitrary: fc.constant({ headers: [] as [string, string][], body: '' }) },
  {
    weight: 1,
    arbitrary: fc.string({ maxLength: 50 }).map((text) => ({
      headers: [['Content-Length', String(Buffer.byteLength(text))]] as [string, string][],
      body: text,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.string({ maxLength: 50 }).map((text) => ({
      headers: [['Transfer-Encoding', 'chunked']] as [string, string][],
      body: `${text.length > 0 ? `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n` : ''}0\r\n\r\n`,
    })),
  },
);

interface Fault {
  hostMissing: boolean;
  unmetExpectation: boolean;
  /** One more header field, which the parser refuses (or, for Expect, Node does not meet). */
  malformed: [string, string] | null;
  version: string;
}

const NO_FAULT: Fault = { hostMissing: false, unmetExpectation: false, malformed: null, version: 'HTTP/1.1' };

/** Rare framing faults: the model knows what the parser must do with each. */
const faultArb = fc.oneof(
  { weight: 40, arbitrary: fc.constant(NO_FAULT) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('HTTP/1.1', 'HTTP/1.0')
      .map((version) => ({ ...NO_FAULT, hostMissing: true, version })),
  },
  {
    weight: 1,
    // Node takes any value holding the word 100-continue for 100-continue.
    arbitrary: fc
      .constantFrom('bananas', '200-ok', 'x100-continue')
      .map((value): Fault => ({ ...NO_FAULT, unmetExpectation: true, malformed: ['Expect', value] })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<[string, string]>(
        ['X-\u00e9', 'a'],
        ['X Space', 'a'],
        ['X-Nul', 'a\u0000b'],
        ['X-Ctl', 'a\u0001b'],
        ['', 'empty-name'],
        ['X-CR', 'a\rb'],
      )
      .map((line): Fault => ({ ...NO_FAULT, malformed: line })),
  },
);

/** An endpoint's route mostly (`before` its tube segment, if any, and `after` it), now and then one near it. */
const routeOrNear = (route: Omit<Route, 'otherRoute'>, near: Omit<Route, 'otherRoute'>[]) =>
  fc.oneof(
    { weight: 30, arbitrary: fc.constant({ ...route, otherRoute: false }) },
    { weight: 1, arbitrary: fc.constantFrom(...near).map((r) => ({ ...r, otherRoute: true })) },
  );

/** A path without a tube segment, or one near it. */
const pathOrNear = (path: string, near: string[]) =>
  routeOrNear(
    { before: path, after: '' },
    near.map((before) => ({ before, after: '' })),
  );

const routeArb = routeOrNear({ before: PREFIX, after: '/measurements' }, [
  { before: PREFIX, after: '' },
  { before: PREFIX, after: '/measurements/' },
  { before: PREFIX, after: '/Measurements' },
  { before: '/V1/groundwater-monitoring-tubes/', after: '/measurements' },
  { before: '/v1//groundwater-monitoring-tubes/', after: '/measurements' },
  { before: '/v2/groundwater-monitoring-tubes/', after: '/measurements' },
]);

/** The network endpoint's path, or one near it. */
const networkRouteArb = pathOrNear(NETWORK_PATH, [
  `${NETWORK_PATH}/`,
  NETWORK_PATH.toUpperCase(),
  NETWORK_PATH.slice(0, -1),
  `/v2${NETWORK_PATH.slice(3)}`,
]);

/** Latest's path, or one near it. */
const latestRouteArb = pathOrNear(LATEST_PATH, [
  `${LATEST_PATH}/`,
  `${NETWORK_PATH}/Latest`,
  `${NETWORK_PATH}/latest/x`,
  `${NETWORK_PATH}//latest`,
]);

/** Discovery's path, or one near it. */
const discoveryRouteArb = pathOrNear(WELLS_PATH, [
  `${WELLS_PATH}/`,
  WELLS_PATH.toUpperCase(),
  `${WELLS_PATH}.geojson`,
  `/v2${WELLS_PATH.slice(3)}`,
]);

/** Each endpoint's path and query; the tube segment is the series' only. */
interface Route {
  before: string;
  after: string;
  otherRoute: boolean;
}
const ROUTES: Record<
  Endpoint,
  (world: World) => { route: fc.Arbitrary<Route>; query: fc.Arbitrary<string> }
> = {
  series: () => ({ route: routeArb, query: queryArb }),
  network: (world) => ({ route: networkRouteArb, query: networkQueryArb(world) }),
  discovery: () => ({ route: discoveryRouteArb, query: discoveryQueryArb }),
  latest: (world) => ({ route: latestRouteArb, query: latestQueryArb(world) }),
};

function requestArb(world: World, endpoint: Endpoint): fc.Arbitrary<Generated> {
  const { route, query } = ROUTES[endpoint](world);
  return fc
    .record({
      method: methodArb,
      route,
      tube: endpoint === 'series' ? tubeArb(world) : fc.constant({ text: '', kind: 'granted' as TubeKind }),
      query,
      key: keyArb(world, endpoint),
      extras: extraHeadersArb,
      accept: fc.oneof(
        { weight: 2, arbitrary: fc.constant([] as { text: string; element: AcceptElement }[][]) },
        { weight: 1, arbitrary: acceptArb },
      ),
      body: bodyArb,
      fault: faultArb,
    })
    .filter(({ route, tube }) => !route.otherRoute || tube.kind === 'granted')
    .map(({ method, route, tube, query, key, extras, accept, body, fault }) => {
      const headers: [string, string][] = [];
      if (!fault.hostMissing) headers.push(['Host', '127.0.0.1']);
      // An unmet expectation is the only Expect field: Node would take a pair holding 100-continue for it.
      const others = fault.unmetExpectation ? extras.filter(([name]) => name !== 'Expect') : extras;
      const acceptFields = accept.map((field): [string, string] => [
        'Accept',
        field.map((e) => e.text).join(','),
      ]);
      headers.push(...key.lines, ...acceptFields, ...others, ...body.headers);
      if (fault.malformed) headers.push(fault.malformed);
      return printable({
        method: method.method,
        version: fault.version,
        path: `${route.before}${tube.text}${route.after}`,
        query,
        headers,
        body: body.body,
        traits: {
          endpoint,
          tube: tube.kind,
          key: key.kind,
          methodKind: method.kind,
          otherRoute: route.otherRoute,
          hostMissing: fault.hostMissing && fault.version === 'HTTP/1.1',
          unmetExpectation: fault.unmetExpectation,
          malformedHeader: fault.malformed !== null && !fault.unmetExpectation,
          accept: accept.length === 0 ? undefined : accept.flat().map((e) => e.element),
        },
      });
    });
}

function requestBytes(r: Generated): Buffer {
  const head = [`${r.method} ${r.path}${r.query} ${r.version}`, ...r.headers.map(([n, v]) => `${n}: ${v}`)];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${r.body}`, 'latin1');
}

// ---------------------------------------------------------------------------------------------------
// The model

/** A decoded query parameter: its instant, or why it is refused. */
function parameter(values: string[]): Instant | 'missing' | 'invalid' {
  if (values.length === 0) return 'missing';
  if (values.length > 1) return 'invalid';
  const parsed = parseDateTime(values[0]!);
  return parsed.ok ? parsed.instant : 'invalid';
}

/**
 * The weight Accept gives a format (RFC 9110 §12.5.1): the q of the most specific element that matches
 * it, the highest of equally specific ones; 0 when none matches.
 */
function acceptWeight(elements: AcceptElement[], format: LatestFormatName): number {
  const matching = elements.flatMap(({ range, q }) => {
    const level = ACCEPT_RANGES[range]![format];
    return level === undefined ? [] : [{ level, q }];
  });
  const top = Math.max(-1, ...matching.map(({ level }) => level));
  return Math.max(0, ...matching.filter(({ level }) => level === top).map(({ q }) => q));
}

/** `format` decides; else the format Accept weighs most, JSON, CSV, Arrow among equals. */
function expectedFormat(given: string | undefined, accept: AcceptElement[] | undefined): FormatName {
  if ((FORMAT_NAMES as readonly string[]).includes(given ?? '')) return given as FormatName;
  if (accept === undefined) return 'json';
  const [json, csv, arrow] = (['json', 'csv', 'arrow'] as const).map((format) =>
    acceptWeight(accept, format),
  );
  if (arrow! > json! && arrow! > csv!) return 'arrow';
  return csv! > json! ? 'csv' : 'json';
}

/** A comma-separated list parameter: its items, 'invalid' (repeated, an item unknown or twice), or undefined. */
function listParameter(values: string[], known: readonly string[]): string[] | 'invalid' | undefined {
  if (values.length === 0) return undefined;
  if (values.length > 1) return 'invalid';
  const items = values[0]!.split(',');
  const wrong = items.some((item) => !known.includes(item)) || new Set(items).size < items.length;
  return wrong ? 'invalid' : items;
}

function expectedQuery(
  query: string,
  accept: AcceptElement[] | undefined,
): Pick<Expected, 'errorKeys' | 'interval' | 'format'> {
  const params = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
  const from = parameter(params.getAll('from'));
  const to = parameter(params.getAll('to'));
  const aggregate = params.getAll('aggregate');
  const formats = params.getAll('format');
  const statuses = listParameter(params.getAll('status'), STATUSES);
  const include = listParameter(params.getAll('include'), ['status']);
  const errorKeys: string[] = [];
  const aggregateRefused =
    aggregate.length > 1 || (aggregate.length === 1 && !AGGREGATES.includes(aggregate[0] as Aggregate));
  if (aggregateRefused) errorKeys.push('aggregate');
  if (formats.length > 1 || (formats.length === 1 && !['json', 'csv', 'arrow'].includes(formats[0]!)))
    errorKeys.push('format');
  if (statuses === 'invalid') errorKeys.push('status');
  // A bucket has no single status: include with a valid aggregate is refused too.
  if (include === 'invalid' || (include && aggregate.length === 1 && !aggregateRefused))
    errorKeys.push('include');
  if (typeof from !== 'object') errorKeys.push('from');
  if (typeof to !== 'object') errorKeys.push('to');
  // The interval's own rule is checked once from and to are read, whatever else is wrong.
  if (typeof from === 'object' && typeof to === 'object') {
    const length = microsBetween(from, to);
    if (length <= 0 || length > MAX_INTERVAL_MICROS) errorKeys.push('to');
    else if (errorKeys.length === 0)
      return {
        interval: {
          from,
          to,
          ...(aggregate[0] && { aggregate: aggregate[0] as Aggregate }),
          ...(statuses !== 'invalid' && statuses && { statuses }),
          withStatus: include !== undefined,
        },
        format: expectedFormat(formats[0], accept),
      };
  }
  // Sorted, as the check compares them.
  return { errorKeys: errorKeys.sort() };
}

/** The status the contract gives this request, in its order of checks. */
function expect(world: World, r: Generated, headBytes: number): Expected {
  const { traits } = r;
  const only = (status: number | number[], rest: Partial<Expected> = {}): Expected => ({
    statuses: typeof status === 'number' ? [status] : status,
    ...rest,
  });
  // The parser refuses a method it does not know at the first bytes, before any size limit.
  if (traits.methodKind === 'invalid') return only(400);
  if (traits.methodKind === 'unknownToken') return only(traits.otherRoute ? 404 : 405);
  // Node counts the request line and the header fields; near its limit a few bytes decide.
  if (headBytes > MAX_HEADER_BYTES + 512) return only(traits.malformedHeader ? [400, 431] : 431);
  const nearLimit = headBytes > MAX_HEADER_BYTES - 512;
  const within = (e: Expected): Expected => (nearLimit ? { ...e, statuses: [...e.statuses, 431] } : e);
  if (traits.malformedHeader) return within(only(400));
  if (traits.methodKind === 'connect') return within(only(traits.otherRoute ? 404 : 405));
  if (!traits.otherRoute && traits.tube === 'badEncoding') return within(only(400));
  if (!traits.otherRoute && traits.tube === 'tooLong') return within(only(404));
  if (traits.hostMissing) return within(only(400));
  if (traits.unmetExpectation) return within(only(417));
  if (traits.otherRoute) return within(only(404));
  if (traits.methodKind === 'other') return within(only(405));
  if (traits.key === 'invalid') return within(only(401));
  if (traits.endpoint === 'network') return within(expectNetwork(world, r));
  if (traits.endpoint === 'discovery') return within(expectDiscovery(r));
  if (traits.endpoint === 'latest') return within(expectLatest(world, r));
  const query = expectedQuery(r.query, traits.accept);
  if (query.errorKeys) return within(only(400, query));
  if (traits.key === 'nothing') return within(only(403));
  if (traits.tube !== 'granted') return within(only(404));
  return within(only(notModified(r.headers) ? 304 : 200, query));
}

/** What a `bbox` says: 'invalid' (repeated, not four finite numbers in range, a minimum above its maximum). */
function bboxParameter(values: string[]): 'invalid' | 'inside' | 'outside' | undefined {
  if (values.length === 0) return undefined;
  if (values.length > 1) return 'invalid';
  const items = values[0]!.split(',');
  if (items.length !== 4) return 'invalid';
  const numbers = items.map((item) =>
    /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(item) ? Number(item) : Number.NaN,
  );
  if (!numbers.every(Number.isFinite)) return 'invalid';
  const [minLon, minLat, maxLon, maxLat] = numbers as [number, number, number, number];
  const inRange =
    [minLon, maxLon].every((x) => Math.abs(x) <= 180) && [minLat, maxLat].every((y) => Math.abs(y) <= 90);
  if (!inRange || minLon > maxLon || minLat > maxLat) return 'invalid';
  const [lon, lat] = WELL_LOCATION;
  return minLon <= lon && lon <= maxLon && minLat <= lat && lat <= maxLat ? 'inside' : 'outside';
}

/** `format` decides; else the one Accept weighs most, JSON first among equals. */
function discoveryFormat(given: string | undefined, accept: AcceptElement[] | undefined): DiscoveryFormat {
  if ((DISCOVERY_FORMATS as readonly string[]).includes(given ?? '')) return given as DiscoveryFormat;
  if (accept === undefined) return 'json';
  return acceptWeight(accept, 'geojson') > acceptWeight(accept, 'json') ? 'geojson' : 'json';
}

/** Discovery past the key: its parameters, then the key that reads nothing. */
function expectDiscovery(r: Generated): Expected {
  const params = new URLSearchParams(r.query.startsWith('?') ? r.query.slice(1) : r.query);
  const formats = params.getAll('format');
  const bbox = bboxParameter(params.getAll('bbox'));
  const errorKeys: string[] = [];
  if (bbox === 'invalid') errorKeys.push('bbox');
  if (
    formats.length > 1 ||
    (formats.length === 1 && !(DISCOVERY_FORMATS as readonly string[]).includes(formats[0]!))
  )
    errorKeys.push('format');
  if (errorKeys.length > 0) return { statuses: [400], errorKeys: errorKeys.sort() };
  if (r.traits.key === 'nothing') return { statuses: [403] };
  return {
    statuses: [notModified(r.headers) ? 304 : 200],
    format: discoveryFormat(formats[0], r.traits.accept),
    outsideBox: bbox === 'outside',
  };
}

/** Why the contract refuses a `tubes` list, if it does: an empty item, more than 200, or a duplicate. */
const listRefused = (items: string[]) =>
  items.includes('') ||
  items.length > 200 ||
  new Set(items.map((item) => item.toLowerCase())).size < items.length;

/**
 * The contract's order on the network endpoint, past the key: parameters (with a token not issued to this
 * key), the key that reads nothing, listed tubes it may not read, a token whose changes are gone.
 */
function expectNetwork(world: World, r: Generated): Expected {
  const params = new URLSearchParams(r.query.startsWith('?') ? r.query.slice(1) : r.query);
  const series = expectedQuery(r.query, r.traits.accept);
  const tubes = params.getAll('tubes');
  const since = params.getAll('changedSince');
  const bbox = bboxParameter(params.getAll('bbox'));
  const items = tubes[0]?.split(',');
  const errorKeys = [...(series.errorKeys ?? [])];
  if (tubes.length > 1 || (items && listRefused(items))) errorKeys.push('tubes');
  if (since.length > 1) errorKeys.push('changedSince');
  if (bbox === 'invalid') errorKeys.push('bbox');
  if (errorKeys.length > 0) return { statuses: [400], errorKeys: errorKeys.sort() };
  const token = since[0];
  const issued = r.traits.key === 'reader' && (token === world.tokens.current || token === world.tokens.gone);
  if (token !== undefined && !issued) return { statuses: [400], errorKeys: ['changedSince'] };
  if (r.traits.key === 'nothing') return { statuses: [403] };
  const refused = items?.find((item) => item.toLowerCase() !== world.granted);
  if (refused !== undefined) return { statuses: [404], notFound: refused };
  if (token === world.tokens.gone) return { statuses: [410] };
  return {
    ...series,
    statuses: [notModified(r.headers) ? 304 : 200],
    delta: token !== undefined,
    outsideBox: bbox === 'outside',
  };
}

/** Whether a list of names is refused: an empty item, one not in `known`, or a duplicate. */
const namesRefused = (text: string, known: readonly string[]) => {
  const items = text.split(',');
  return items.some((item) => !known.includes(item)) || new Set(items).size < items.length;
};

/** `format` decides; else the format Accept weighs most, JSON, CSV, Arrow, GeoJSON among equals. */
function expectedLatestFormat(given: string | undefined, accept: AcceptElement[] | undefined) {
  if ((LATEST_FORMAT_NAMES as readonly string[]).includes(given ?? '')) return given as LatestFormatName;
  if (accept === undefined) return 'json';
  let chosen: LatestFormatName = 'json';
  for (const format of LATEST_FORMAT_NAMES)
    if (acceptWeight(accept, format) > acceptWeight(accept, chosen)) chosen = format;
  return chosen;
}

/**
 * The contract's order on latest, past the key: parameters (an interval or anything else it does not
 * know is ignored), the key that reads nothing, listed tubes it may not read.
 */
function expectLatest(world: World, r: Generated): Expected {
  const params = new URLSearchParams(r.query.startsWith('?') ? r.query.slice(1) : r.query);
  const [tubes, status, include, formats] = ['tubes', 'status', 'include', 'format'].map((name) =>
    params.getAll(name),
  ) as [string[], string[], string[], string[]];
  const bbox = bboxParameter(params.getAll('bbox'));
  const items = tubes[0]?.split(',');
  const errorKeys: string[] = [];
  if (bbox === 'invalid') errorKeys.push('bbox');
  if (
    formats.length > 1 ||
    (formats.length === 1 && !(LATEST_FORMAT_NAMES as readonly string[]).includes(formats[0]!))
  )
    errorKeys.push('format');
  if (include.length > 1 || (include.length === 1 && namesRefused(include[0]!, ['status'])))
    errorKeys.push('include');
  if (status.length > 1 || (status.length === 1 && namesRefused(status[0]!, STATUSES)))
    errorKeys.push('status');
  if (tubes.length > 1 || (items && listRefused(items))) errorKeys.push('tubes');
  if (errorKeys.length > 0) return { statuses: [400], errorKeys };
  if (r.traits.key === 'nothing') return { statuses: [403] };
  const refused = items?.find((item) => item.toLowerCase() !== world.granted);
  if (refused !== undefined) return { statuses: [404], notFound: refused };
  const passing = status[0]?.split(',').map((name) => STATUSES.indexOf(name as Status)) ?? [0, 1, 2];
  return {
    statuses: [notModified(r.headers) ? 304 : 200],
    format: expectedLatestFormat(formats[0], r.traits.accept),
    latest: { passing, withStatus: include.length === 1 },
    outsideBox: bbox === 'outside',
  };
}

// ---------------------------------------------------------------------------------------------------
// Checks of one answer

class Mismatch extends Error {}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Mismatch(message);
}

function checkProblem(r: Generated, response: RawResponse, expected: Expected, isHead: boolean) {
  check(field(response, 'content-type') === 'application/problem+json', 'problem media type');
  if (response.status === 401) check(field(response, 'www-authenticate') !== undefined, '401 challenge');
  if (response.status === 405) check(field(response, 'allow') === 'GET, HEAD', '405 Allow');
  if (isHead) return;
  const body = JSON.parse(response.body.toString('utf8'));
  check(body.type === 'about:blank', 'type about:blank');
  check(body.title === STATUS_CODES[response.status], `title is the reason phrase: ${body.title}`);
  check(body.status === response.status, 'status member equals the HTTP status');
  check(body.detail === undefined || typeof body.detail === 'string', 'detail a string');
  // Answers that went through the app name the path; the HTTP parser's own refusals may not.
  if (field(response, 'x-request-id') !== undefined)
    check(body.instance === r.path, `instance ${body.instance}`);
  else check(body.instance === undefined || body.instance === r.path, `instance ${body.instance}`);
  const members = Object.keys(body).filter(
    (k) => !['type', 'title', 'status', 'detail', 'instance'].includes(k),
  );
  if (response.status !== 400) check(members.length === 0, `no other member than errors on 400: ${members}`);
  else
    check(
      members.every((m) => m === 'errors'),
      `unknown members ${members}`,
    );
  if (expected.notFound !== undefined && response.status === 404)
    check(
      body.detail.includes(JSON.stringify(expected.notFound).slice(1, -1)),
      'the 404 names the tube as sent',
    );
  if (expected.errorKeys && response.status === 400) {
    check(body.errors !== undefined, 'a 400 of the parameters has errors');
    check(
      JSON.stringify(Object.keys(body.errors).sort()) === JSON.stringify(expected.errorKeys),
      `errors names ${Object.keys(body.errors)}, expected ${expected.errorKeys}`,
    );
    for (const messages of Object.values(body.errors)) {
      check(
        Array.isArray(messages) &&
          messages.length > 0 &&
          messages.every((m) => typeof m === 'string' && m !== ''),
        'errors maps to non-empty message arrays',
      );
    }
  } else {
    check(body.errors === undefined, 'errors only for the parameters');
  }
}

/** The headers of a series (GET and HEAD alike) in the format the model expects. */
function checkSeriesHeaders(world: World, response: RawResponse, expected: Expected) {
  checkFormatHeaders(response, expected, world.granted);
}

const MEDIA_TYPES: Record<LatestFormatName, string> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8; header=present',
  arrow: 'application/vnd.apache.arrow.stream',
  geojson: 'application/geo+json',
};
const EXTENSIONS: Record<LatestFormatName, string | undefined> = {
  json: undefined,
  csv: 'csv',
  arrow: 'arrows',
  geojson: undefined,
};

/** Vary, the media type of the format, and the file name `<stem>_<from>_<to>.<extension>` of files. */
function checkFormatHeaders(response: RawResponse, expected: Expected, stem: string) {
  check(field(response, 'vary') === 'Accept, Accept-Encoding', 'Vary');
  const format = expected.format as FormatName;
  check(field(response, 'content-type') === MEDIA_TYPES[format], `media type for ${format}`);
  const { from, to } = expected.interval!;
  const compact = (instant: Instant) => utcText(instant).replace(/[-:]/g, '');
  const extension = EXTENSIONS[format];
  check(
    field(response, 'content-disposition') ===
      (extension && `attachment; filename="${stem}_${compact(from)}_${compact(to)}.${extension}"`),
    'Content-Disposition',
  );
}

/** The rows of an Arrow table as the JSON writes them, read by apache-arrow. */
function arrowRows(table: Table, aggregate: Aggregate | undefined) {
  const column = (name: string) =>
    table.getChild(name)?.data.flatMap((data) => Array.from(data.values as ArrayLike<number | bigint>)) ?? [];
  const [values, mins, maxes, counts] = ['value', 'min', 'max', 'count'].map(column);
  const statuses = table.getChild('status')?.toArray() as string[] | undefined;
  return column('observedAt').map((micros, i) => {
    const at = BigInt(micros);
    const seconds = at / 1_000_000n - (at % 1_000_000n < 0n ? 1n : 0n);
    const instant = { seconds: Number(seconds), micros: Number(at - seconds * 1_000_000n) };
    return {
      observedAt: utcText(instant),
      value: values![i],
      ...(statuses && { status: statuses[i] }),
      ...(aggregate && { min: mins![i], max: maxes![i], count: Number(counts![i]) }),
    };
  });
}

/** The measurements of the interval, in time order. */
const rowsWithin = (world: World, { from, to }: { from: Instant; to: Instant }) =>
  world.rows.filter(({ at }) => microsBetween(from, at) >= 0 && microsBetween(at, to) > 0);

/** The measurements of the granted tube the series states for the interval, as JSON writes them. */
function writtenRows(world: World, interval: NonNullable<Expected['interval']>) {
  const { statuses, withStatus } = interval;
  const inside = rowsWithin(world, interval).filter(({ status }) => !statuses || statuses.includes(status));
  return interval.aggregate
    ? buckets(inside, interval.from, AGGREGATE_SECONDS[interval.aggregate])
    : inside.map(({ at, value, status }) => ({
        observedAt: utcText(at),
        value,
        ...(withStatus && { status }),
      }));
}

/** CSV lines of the rows, each after `before`: numbers as JSON writes them (both print ECMA-262's Number::toString). */
const csvLines = (written: ReturnType<typeof writtenRows>, before = '') =>
  written.map((row) => `${before}${Object.values(row).join(',')},m,NAP\r\n`).join('');

const csvColumns = ({ aggregate, withStatus }: NonNullable<Expected['interval']>) =>
  `observedAt,value,${withStatus ? 'status,' : ''}${aggregate ? 'min,max,count,' : ''}unit,verticalDatum`;

function checkSeries(world: World, response: RawResponse, expected: Expected) {
  const { from, to, aggregate } = expected.interval!;
  const written = writtenRows(world, expected.interval!);
  if (expected.format === 'csv') {
    const header = csvColumns(expected.interval!);
    const lines = csvLines(written);
    check(
      response.body.toString('utf8') === `${header}\r\n${lines}`,
      `the CSV of the interval: ${written.length} rows`,
    );
    return;
  }
  if (expected.format === 'arrow') {
    const table = tableFromIPC(response.body);
    const head = Object.fromEntries(table.schema.metadata);
    check(head.tubeIdentifier === world.granted, 'the canonical identifier in the metadata');
    check(head.from === utcText(from) && head.to === utcText(to), `interval ${head.from} ${head.to}`);
    check(head.aggregate === aggregate, `aggregate ${head.aggregate}`);
    const rows = arrowRows(table, aggregate);
    check(
      JSON.stringify(rows) === JSON.stringify(written),
      `the Arrow rows: ${rows.length} of ${written.length}`,
    );
    return;
  }
  const series = JSON.parse(response.body.toString('utf8'));
  check(series.tubeIdentifier === world.granted, 'the canonical identifier');
  check(series.from === utcText(from) && series.to === utcText(to), `interval ${series.from} ${series.to}`);
  check(series.unit === 'm' && series.verticalDatum === 'NAP', 'unit and datum');
  check(series.aggregate === aggregate, `aggregate ${series.aggregate}`);
  check(
    JSON.stringify(series.measurements) === JSON.stringify(written),
    `the measurements of [${series.from}, ${series.to}): ${series.measurements.length} of ${written.length}`,
  );
}

/** The buckets the contract defines over rows in time order: from `from` on, `seconds` long, the mean summed in order. */
function buckets(rows: World['rows'], from: Instant, seconds: number) {
  const stride = seconds * 1_000_000;
  const grouped = new Map<number, number[]>();
  for (const { at, value } of rows) {
    const index = Math.floor(microsBetween(from, at) / stride);
    grouped.set(index, [...(grouped.get(index) ?? []), value]);
  }
  return [...grouped].map(([index, values]) => ({
    observedAt: utcText(addMicros(from, index * stride)),
    value: values.reduce((sum, value) => sum + value, 0) / values.length,
    min: Math.min(...values),
    max: Math.max(...values),
    count: values.length,
  }));
}

/**
 * The network endpoint's headers: its media types, file names and Sync-Token. Its tag is weak: the body
 * holds the token of its own snapshot, so equal measurements need not be equal bytes.
 */
function checkNetworkHeaders(response: RawResponse, expected: Expected) {
  checkFormatHeaders(response, expected, 'groundwater-measurements');
  check(/^[A-Za-z0-9_-]{1,200}$/.test(field(response, 'sync-token') ?? ''), 'a URL-safe Sync-Token');
}

/** The network body: the granted tube's series (none for a delta since the current token). */
function checkNetwork(world: World, response: RawResponse, expected: Expected) {
  const { from, to, aggregate } = expected.interval!;
  const written = expected.delta || expected.outsideBox ? [] : writtenRows(world, expected.interval!);
  if (expected.format === 'csv') {
    check(
      response.body.toString('utf8') ===
        `tubeIdentifier,${csvColumns(expected.interval!)}\r\n${csvLines(written, `${world.granted},`)}`,
      `the network CSV: ${written.length} rows`,
    );
    return;
  }
  if (expected.format === 'arrow') {
    const table = tableFromIPC(response.body);
    const head = Object.fromEntries(table.schema.metadata);
    check(head.from === utcText(from) && head.to === utcText(to), `interval ${head.from} ${head.to}`);
    check(head.aggregate === aggregate, `aggregate ${head.aggregate}`);
    check(head.syncToken === field(response, 'sync-token'), 'the token of Sync-Token');
    const columns = [
      'tubeIdentifier',
      'observedAt',
      'value',
      ...(expected.interval!.withStatus ? ['status'] : []),
      ...(aggregate ? ['min', 'max', 'count'] : []),
    ];
    check(
      JSON.stringify(table.schema.fields.map((f) => f.name)) ===
        JSON.stringify([...columns, 'unit', 'verticalDatum']),
      'the columns',
    );
    const strings = (name: string) => new Set([...(table.getChild(name) ?? [])]);
    check(
      table.numRows === 0 ||
        JSON.stringify(['tubeIdentifier', 'unit', 'verticalDatum'].map((name) => [...strings(name)])) ===
          JSON.stringify([[world.granted], ['m'], ['NAP']]),
      'the tube, its unit and datum on every row',
    );
    const rows = arrowRows(table, aggregate);
    check(
      JSON.stringify(rows) === JSON.stringify(written),
      `the Arrow rows: ${rows.length} of ${written.length}`,
    );
    return;
  }
  const network = JSON.parse(response.body.toString('utf8'));
  check(
    network.from === utcText(from) && network.to === utcText(to),
    `interval ${network.from} ${network.to}`,
  );
  check(network.aggregate === aggregate, `aggregate ${network.aggregate}`);
  check(network.syncToken === field(response, 'sync-token'), 'the token of Sync-Token');
  const series =
    expected.delta || expected.outsideBox
      ? []
      : [{ tubeIdentifier: world.granted, unit: 'm', verticalDatum: 'NAP', measurements: written }];
  check(
    JSON.stringify(
      network.series.map(
        ({ tubeIdentifier, unit, verticalDatum, measurements }: (typeof series)[number]) => ({
          tubeIdentifier,
          unit,
          verticalDatum,
          measurements,
        }),
      ),
    ) === JSON.stringify(series),
    `the series of [${network.from}, ${network.to}): ${network.series.length} tubes`,
  );
}

/** Discovery: the granted tube's well (its hidden tube left out), unless the box leaves it out. */
function checkDiscovery(world: World, response: RawResponse, expected: Expected, isHead: boolean) {
  const geojson = expected.format === 'geojson';
  check(
    field(response, 'content-type') === (geojson ? 'application/geo+json' : 'application/json'),
    'media type',
  );
  check(field(response, 'vary') === 'Accept, Accept-Encoding', 'Vary');
  check(/^"[^"]+"$/.test(field(response, 'etag') ?? ''), 'a strong ETag');
  if (isHead) return;
  const location = { type: 'Point', coordinates: [...WELL_LOCATION] };
  const tubes = [{ identifier: world.granted, number: '1', unit: 'm', verticalDatum: 'NAP' }];
  const wells = expected.outsideBox ? [] : [{ name: 'Well renamed', tubes, location }];
  const body = geojson
    ? {
        type: 'FeatureCollection',
        features: wells.map(({ name, location }) => ({
          type: 'Feature',
          geometry: location,
          properties: { name, tubes },
        })),
      }
    : wells;
  check(
    response.body.toString('utf8') === JSON.stringify(body),
    `the ${expected.format} of ${wells.length} wells`,
  );
}

/** Latest's headers: the format's media type, its file `groundwater-latest-measurements.<extension>`. */
function checkLatestHeaders(response: RawResponse, expected: Expected) {
  check(field(response, 'vary') === 'Accept, Accept-Encoding', 'Vary');
  const format = expected.format!;
  check(field(response, 'content-type') === MEDIA_TYPES[format], `media type for ${format}`);
  const extension = EXTENSIONS[format];
  check(
    field(response, 'content-disposition') ===
      (extension && `attachment; filename="groundwater-latest-measurements.${extension}"`),
    'Content-Disposition',
  );
  check(/^"[^"]+"$/.test(field(response, 'etag') ?? ''), 'a strong tag');
}

/**
 * Latest's body: the granted tube's newest measurement among those whose status passes, unless the box
 * leaves its well out; never the hidden tube of the same well. As the JSON writes it, in each format.
 */
function checkLatest(world: World, response: RawResponse, expected: Expected) {
  const { passing, withStatus } = expected.latest!;
  const newest = world.rows
    .filter((row) => passing.includes(STATUSES.indexOf(row.status)))
    .reduce<World['rows'][number] | undefined>(
      (latest, row) => (latest === undefined || microsBetween(latest.at, row.at) > 0 ? row : latest),
      undefined,
    );
  const rows =
    newest && !expected.outsideBox
      ? [
          {
            tubeIdentifier: world.granted,
            observedAt: utcText(newest.at),
            value: newest.value,
            ...(withStatus && { status: newest.status }),
            unit: 'm',
            verticalDatum: 'NAP',
          },
        ]
      : [];
  const body = response.body.toString('utf8');
  if (expected.format === 'json') {
    check(body === JSON.stringify(rows), `the JSON: ${rows.length} rows`);
  } else if (expected.format === 'geojson') {
    const features = rows.map((properties) => ({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [...WELL_LOCATION] },
      properties: { ...properties, wellName: 'Well renamed', tubeNumber: '1' },
    }));
    check(
      body === JSON.stringify({ type: 'FeatureCollection', features }),
      `the GeoJSON: ${rows.length} features`,
    );
  } else if (expected.format === 'csv') {
    const lines = rows.map((row) => `${Object.values(row).join(',')}\r\n`).join('');
    const header = `tubeIdentifier,observedAt,value,${withStatus ? 'status,' : ''}unit,verticalDatum`;
    check(body === `${header}\r\n${lines}`, `the CSV: ${rows.length} rows`);
  } else {
    const table = tableFromIPC(response.body);
    const read = table.toArray().map((row) => {
      const { observedAt: _, ...rest } = row.toJSON();
      return { ...rest };
    });
    const observed = arrowRows(table, undefined).map((row) => row.observedAt);
    check(
      JSON.stringify(read) === JSON.stringify(rows.map(({ observedAt: _, ...row }) => row)) &&
        JSON.stringify(observed) === JSON.stringify(rows.map((row) => row.observedAt)),
      `the Arrow rows: ${read.length} of ${rows.length}`,
    );
  }
}

function checkNotModified(response: RawResponse, endpoint: Endpoint) {
  check(response.body.length === 0, '304 without a body');
  const tag = endpoint === 'network' ? /^W\/"[^"]+"$/ : /^"[^"]+"$/;
  check(tag.test(field(response, 'etag') ?? ''), '304 with the ETag');
  check(field(response, 'cache-control') === 'private, no-cache', '304 with Cache-Control');
  check(field(response, 'content-type') === undefined, '304 without Content-Type');
}

function checkResponse(world: World, r: Generated, response: RawResponse, expected: Expected) {
  check(response.status >= 200 && response.status < 500, `never a 5xx: ${response.status}`);
  check(
    expected.statuses.includes(response.status),
    `status ${response.status}, expected ${expected.statuses.join(' or ')}`,
  );
  check(response.reason === STATUS_CODES[response.status], `reason phrase ${response.reason}`);
  check(field(response, 'api-version') === '1.4.0', 'API-Version');
  const isHead = r.method === 'HEAD';
  const network = r.traits.endpoint === 'network';
  if (response.status >= 400) checkProblem(r, response, expected, isHead);
  else if (response.status === 304) checkNotModified(response, r.traits.endpoint);
  else if (r.traits.endpoint === 'discovery') checkDiscovery(world, response, expected, isHead);
  else if (r.traits.endpoint === 'latest') {
    checkLatestHeaders(response, expected);
    if (!isHead) checkLatest(world, response, expected);
  } else if (network) {
    checkNetworkHeaders(response, expected);
    if (!isHead) checkNetwork(world, response, expected);
  } else {
    checkSeriesHeaders(world, response, expected);
    if (!isHead) checkSeries(world, response, expected);
  }
}

// ---------------------------------------------------------------------------------------------------

/** Readable form of a request for a failure message (long runs shortened). */
const show = (r: Generated) =>
  JSON.stringify({ ...r, traits: r.traits }, (_, v) =>
    typeof v === 'string' && v.length > 200 ? `${v.slice(0, 80)}…(${v.length} chars)` : v,
  );

/** fast-check prints a counterexample with this: the failing batch stays readable. */
const printable = (r: Generated): Generated => Object.assign(r, { [fc.toStringMethod]: () => show(r) });

/** How often each outcome must come, so that no check above is vacuous. */
interface Coverage {
  statuses: number[];
  /** Parameters that 400s must have named. */
  errorKeys: string[];
}

const COVERAGE: Record<Endpoint, Coverage> = {
  series: {
    statuses: [200, 400, 401, 403, 404, 405, 417, 431],
    errorKeys: ['aggregate', 'format', 'from', 'include', 'status', 'to'],
  },
  network: {
    statuses: [200, 400, 401, 403, 404, 405, 410],
    errorKeys: ['aggregate', 'bbox', 'changedSince', 'format', 'from', 'include', 'status', 'to', 'tubes'],
  },
  discovery: { statuses: [200, 304, 400, 401, 403, 404, 405], errorKeys: ['bbox', 'format'] },
  latest: {
    statuses: [200, 400, 401, 403, 404, 405],
    errorKeys: ['bbox', 'format', 'include', 'status', 'tubes'],
  },
};

const ENDPOINTS = (['series', 'network', 'discovery', 'latest'] as const).filter(
  (endpoint) => (process.env.GWAPI_FUZZ_ENDPOINT ?? endpoint) === endpoint,
);

async function fuzz(t: Test, api: TestApi, world: World, endpoint: Endpoint) {
  const statuses = new Map<number, number>();
  const formats = new Map<string, number>();
  const named = new Map<string, number>();
  /** 200s of a status filter, and with the status: in any format, so that both are common enough. */
  const answered = new Map<string, number>();
  const count = (map: Map<string | number, number>, key: string | number) =>
    map.set(key, (map.get(key) ?? 0) + 1);
  let sent = 0;
  const started = performance.now();
  const send = async (r: Generated) => {
    const bytes = requestBytes(r);
    const headBytes = bytes.indexOf('\r\n\r\n') + 4;
    const expected = expect(world, r, headBytes);
    let response: RawResponse;
    try {
      response = await exchange(api.port, bytes, { head: r.method === 'HEAD', timeoutMs: DEADLINE_MS });
    } catch (error) {
      throw new Mismatch(`${(error as Error).message}: ${show(r)}`);
    }
    sent++;
    count(statuses, response.status);
    if (expected.format && response.status === 200) {
      count(formats, expected.format);
      if (expected.outsideBox) count(answered, 'outside the box');
      const filter = expected.latest
        ? expected.latest.passing.length < STATUSES.length
        : expected.interval?.statuses !== undefined;
      const withStatus = expected.latest?.withStatus ?? expected.interval?.withStatus;
      if (filter) count(answered, 'by status');
      if (withStatus) count(answered, 'with the status');
    }
    if (response.status === 400) for (const key of expected.errorKeys ?? []) count(named, key);
    try {
      checkResponse(world, r, response, expected);
    } catch (error) {
      throw new Mismatch(
        `${(error as Error).message}\nrequest: ${show(r)}\nresponse: ${response.status} ${response.head}\n${response.body.toString().slice(0, 600)}`,
      );
    }
  };

  const discovery = endpoint === 'discovery';
  const offered =
    { discovery: DISCOVERY_FORMATS, latest: LATEST_FORMAT_NAMES }[endpoint as string] ?? FORMAT_NAMES;
  const answers = discovery ? ['outside the box'] : ['by status', 'with the status'];
  if (endpoint === 'network' || endpoint === 'latest') answers.push('outside the box');
  /** What the requests must have covered, each at least 10 times. */
  const coverage: [Map<string | number, number>, string | number, string][] = [
    ...COVERAGE[endpoint].statuses.map((status): [Map<string | number, number>, number, string] => [
      statuses,
      status,
      `${status} answered`,
    ]),
    ...COVERAGE[endpoint].errorKeys.map((key): [Map<string | number, number>, string, string] => [
      named,
      key,
      `errors.${key} named`,
    ]),
    ...offered.map((format): [Map<string | number, number>, string, string] => [
      formats,
      format,
      `${format} answered`,
    ]),
    ...answers.map((what): [Map<string | number, number>, string, string] => [
      answered,
      what,
      `answered ${what}`,
    ]),
  ];
  const covered = () => coverage.every(([map, key]) => (map.get(key) ?? 0) >= 10);
  // REQUESTS at least; then, while a rare case has come fewer than 10 times, a quarter as many again.
  for (let round = 0; round === 0 || (round < 5 && !covered()); round++) {
    await fc.assert(
      fc.asyncProperty(
        fc.array(requestArb(world, endpoint), { minLength: CONCURRENCY, maxLength: CONCURRENCY }),
        async (batch) => {
          await Promise.all(batch.map(send));
        },
      ),
      { numRuns: Math.ceil(REQUESTS / CONCURRENCY / (round === 0 ? 1 : 4)), endOnFailure: true, ...REPLAY },
    );
  }
  const seconds = (performance.now() - started) / 1000;
  t.ok(sent >= REQUESTS, `${sent} requests in ${seconds.toFixed(1)} s`);
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  t.comment(`formats of the 200s: ${JSON.stringify(Object.fromEntries(formats))}`);
  for (const [map, key, what] of coverage) {
    t.ok((map.get(key) ?? 0) >= 10, `${what} at least 10 times (${map.get(key) ?? 0})`);
  }
}

/** A network response's Sync-Token, for a key. */
async function syncToken(api: TestApi, key: string): Promise<string> {
  const response = await fetch(
    `${api.base}${NETWORK_PATH}?from=2024-01-01T00:00:00Z&to=2024-01-02T00:00:00Z`,
    {
      headers: { 'x-api-key': key },
    },
  );
  await response.arrayBuffer();
  const token = response.headers.get('sync-token');
  if (response.status !== 200 || token === null) throw new Error(`no sync token: ${response.status}`);
  return token;
}

// Four endpoints of at least REQUESTS requests each outlast the suite's timeout per file on a busy machine.
t.setTimeout(20 * 60_000);

t.test('generated hostile requests get contract answers, never a 5xx, never a hang', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  // One well holds the granted tube and the hidden one, where boxes can hold it or leave it out.
  const [granted, hidden] = await addWell(sql, 'Well', [{ number: '1' }, { number: '2' }]);
  await sql`update wells set longitude = ${WELL_LOCATION[0]}, latitude = ${WELL_LOCATION[1]} where name = 'Well'`;
  // Rows at random instants of 2023 to 2025 with microseconds, values with up to 15 significant digits.
  const rows = fc
    .sample(
      fc.record({
        at: fc.record({ seconds: fc.integer({ min: 1_672_531_200, max: 1_735_689_600 }), micros: microsArb }),
        value: fc.integer({ min: -999_999_999, max: 999_999_999 }).map((n) => n / 1000),
        status: fc.constantFrom(...STATUSES),
      }),
      { numRuns: 400, seed: 7 },
    )
    .filter((row, i, all) => all.findIndex((o) => microsBetween(o.at, row.at) === 0) === i)
    .sort((a, b) => microsBetween(b.at, a.at));
  await addMeasurements(
    sql,
    granted!.id,
    rows.map(({ at, value }) => [utcText(at), String(value)]),
  );
  await sql`
    update measurements m set status = s.code
    from unnest(${rows.map(({ at }) => utcText(at))}::timestamptz[],
                ${rows.map(({ status }) => STATUSES.indexOf(status))}::int2[]) as s(at, code)
    where m.tube_id = ${granted!.id} and m.observed_at = s.at`;
  await rollUpDays(sql, [granted!.id]);
  await addMeasurements(sql, hidden!.id, [['2024-01-01T00:00:00Z', '1']]);
  // latest_measurements as the writers keep it: the rows above were written straight into measurements.
  await refreshLatest(sql);
  const reader = await addKey(sql, { tubeIds: [granted!.id] });
  const nothing = await addKey(sql);
  const revoked = await addKey(sql, { tubeIds: [granted!.id] });
  await revokeKey(sql, revoked.keyId);
  const other = await addKey(sql, { tubeIds: [granted!.id] });
  // Renaming the well changes what the reader's copy holds: its token from before is gone (410).
  const gone = await syncToken(api, reader.key);
  await sql`update wells set name = 'Well renamed' where id = (select well_id from tubes where id = ${granted!.id})`;
  const world: World = {
    granted: granted!.identifier,
    hidden: hidden!.identifier,
    keys: { reader: reader.key, nothing: nothing.key, revoked: revoked.key },
    rows,
    tokens: { current: await syncToken(api, reader.key), gone, otherKey: await syncToken(api, other.key) },
  };
  for (const endpoint of ENDPOINTS) await t.test(endpoint, (t) => fuzz(t, api, world, endpoint));
  const errors = api.logLines.filter((line) => JSON.parse(line).level >= 50);
  t.same(errors, [], 'nothing logged as an error');
});
