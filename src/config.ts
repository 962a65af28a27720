/**
 * Settings: the only module that reads `process.env`. Everything else receives a typed `Settings`.
 *
 * Each variable is described once here; the same table drives validation, `gwapi --help` and
 * docs/operations/settings.md.
 */
import { z } from 'zod';
import { postgresUrlProblem } from './db/postgresUrl.js';

const integer = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `expected a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `expected at least ${min}`).max(max, `expected at most ${max}`));

const positiveNumber = z
  .string()
  .regex(/^\d+(\.\d+)?$/, 'expected a positive number')
  .transform(Number)
  .pipe(z.number().positive('expected a positive number'));

const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'expected true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** Fastify's `trustProxy`: a flag, a hop count, or the addresses/CIDRs of the proxies in front. */
const trustProxy = z
  .string()
  .trim()
  .min(1)
  .transform((value): boolean | number | string[] => {
    if (value === 'true' || value === 'false') return value === 'true';
    if (/^\d+$/.test(value)) return Number(value);
    return value.split(',').map((part) => part.trim());
  })
  .refine(
    (value) => !Array.isArray(value) || value.every((part) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(part)),
    'expected true, false, a hop count, or addresses/CIDRs separated by commas',
  );

const url = (protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `expected a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
  );

/** A PostgreSQL URL in libpq's form, several hosts included (src/db/postgresUrl.ts). */
const postgresUrl = z.string().superRefine((value, context) => {
  const problem = postgresUrlProblem(value);
  if (problem) context.addIssue({ code: 'custom', message: problem });
});

/** `host:port` pairs separated by commas (Redis Sentinel addresses). */
const hostPorts = z
  .string()
  .trim()
  .min(1)
  .transform((value) => value.split(',').map((part) => /^([^\s:,]+):(\d{1,5})$/.exec(part.trim())))
  .refine(
    (matches) => matches.every((match) => match !== null && Number(match[2]) <= 65535),
    'expected host:port pairs separated by commas',
  )
  .transform((matches) => matches.map((match) => ({ host: match![1]!, port: Number(match![2]) })));

/** A variable: its schema, its default (as the environment would spell it), and what it is for. */
interface Variable {
  schema: z.ZodType;
  default?: string;
  /** Secret-bearing values (URLs with passwords) are never echoed in error messages. */
  secret?: boolean;
  description: string;
}

export const variables = {
  DATABASE_URL: {
    schema: postgresUrl,
    secret: true,
    description:
      "PostgreSQL/TimescaleDB connection URL. Several hosts in libpq's form with target_session_attrs=read-write (postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write) follow a switch-over of the primary. Unset: an embedded PostgreSQL keeps its data in GWAPI_DATA_DIR.",
  },
  DATABASE_POOL_MAX: {
    schema: integer(1, 1000),
    default: '10',
    description: 'Most database connections this process opens (each streaming response holds one).',
  },
  DATABASE_WAIT_SECONDS: {
    schema: positiveNumber.pipe(z.number().max(600, 'expected at most 600')),
    default: '5',
    description:
      'How long a request waits for a free database connection when all are in use (slow clients holding streams); then it is refused with 503 and Retry-After.',
  },
  BULK_CONNECTIONS: {
    schema: integer(1, 1000),
    description:
      "Of DATABASE_POOL_MAX's connections, how many bulk documents (the network's measurements) may hold at once; the rest stay free for short requests. Bulk requests beyond it wait as for a connection (DATABASE_WAIT_SECONDS). Unset: a fifth of DATABASE_POOL_MAX, rounded down, at least 1.",
  },
  DATABASE_READ_URL: {
    schema: postgresUrl,
    secret: true,
    description:
      'Streaming replicas of DATABASE_URL, one host or several (postgres://user@host1:5432,host2:5432/db; load_balance_hosts=random|disable, default random, and target_session_attrs as in libpq): `gwapi serve` reads wells, tubes and series from the usable ones; key lookups, migrations, imports and keys stay on DATABASE_URL. Unset: everything on DATABASE_URL.',
  },
  READ_MAX_LAG_SECONDS: {
    schema: positiveNumber.pipe(z.number().max(86_400, 'expected at most 86400')),
    default: '10',
    description:
      'A read replica whose replay is further behind the primary than this gets no new reads until it catches up.',
  },
  READ_FALLBACK: {
    schema: z.enum(['primary', 'unavailable'], { error: 'expected primary or unavailable' }),
    default: 'primary',
    description:
      'Where reads go when no replica of DATABASE_READ_URL is usable: primary (DATABASE_URL), or unavailable (503 with Retry-After).',
  },
  DATABASE_PREPARE: {
    schema: boolean,
    default: 'true',
    description:
      'Named prepared statements; set to false behind PgBouncer in transaction mode older than 1.21 (no max_prepared_statements).',
  },
  REDIS_URL: {
    schema: url(['redis:', 'rediss:']),
    secret: true,
    description:
      'Redis URL for limits shared by all replicas. Unset: limits are kept in process (one replica).',
  },
  REDIS_SENTINELS: {
    schema: hostPorts,
    description:
      'Redis Sentinel addresses (host:port,host:port): limits use the master they name for REDIS_SENTINEL_NAME, and follow a failover. REDIS_URL then gives only credentials, database and TLS.',
  },
  REDIS_SENTINEL_NAME: {
    schema: z.string().trim().min(1),
    default: 'mymaster',
    description: 'The master group the sentinels of REDIS_SENTINELS monitor.',
  },
  HOST: { schema: z.string().min(1), default: '127.0.0.1', description: 'Address the HTTP server binds to.' },
  PORT: {
    schema: integer(0, 65535),
    default: '3000',
    description: 'TCP port of the HTTP server (0: any free port).',
  },
  LOG_LEVEL: {
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    description: 'Least severe log level written to standard output (in LOG_FORMAT).',
  },
  LOG_FORMAT: {
    schema: z.enum(['json', 'pretty'], { error: 'expected json or pretty' }),
    description:
      'json: one JSON line per record; pretty: readable lines for a person. Unset: pretty on a terminal, JSON otherwise.',
  },
  GWAPI_DATA_DIR: {
    schema: z.string().min(1),
    default: '.gwapi',
    description: 'Folder of the embedded PostgreSQL (used only without DATABASE_URL).',
  },
  KEY_CACHE_SECONDS: {
    schema: integer(0, 10),
    default: '5',
    description: 'How long a resolved API key is cached; a revocation takes effect within this time.',
  },
  RATE_LIMIT_BURST: {
    schema: integer(1, 1_000_000),
    default: '60',
    description: 'Token bucket size per key: requests allowed in a burst.',
  },
  RATE_LIMIT_PER_SECOND: {
    schema: positiveNumber,
    default: '0.5',
    description: 'Token bucket refill per key, in requests per second (0.5 = 30 per minute).',
  },
  CONCURRENCY_LIMIT: {
    schema: integer(1, 1000),
    default: '2',
    description: 'Requests of one key in flight at once, across all replicas.',
  },
  CONCURRENCY_LEASE_SECONDS: {
    schema: positiveNumber,
    default: '10',
    description:
      'Lease of a concurrency slot in Redis, renewed while the response streams: a crashed replica frees its slots within this time.',
  },
  FAILED_AUTH_LIMIT: {
    schema: integer(1, 1_000_000),
    default: '10',
    description:
      'Requests with a missing or invalid key allowed per client address in FAILED_AUTH_WINDOW_SECONDS.',
  },
  FAILED_AUTH_WINDOW_SECONDS: {
    schema: integer(1, 86_400),
    default: '60',
    description: 'Window of FAILED_AUTH_LIMIT, in seconds.',
  },
  TRUST_PROXY: {
    schema: trustProxy,
    default: 'false',
    description:
      'Take the client address from X-Forwarded-For: false (the socket address), true (any proxy), a hop count N (the N nearest peers are proxies: only where replicas are reachable through them alone), or proxy addresses/CIDRs separated by commas.',
  },
  REDIS_COMMAND_TIMEOUT_MS: {
    schema: integer(10, 60_000),
    default: '500',
    description:
      'A Redis call slower than this fails, and limits fall back to this process until Redis answers.',
  },
  LIMITS_ENABLED: {
    schema: boolean,
    default: 'true',
    description: 'Set to false to lift all client limits (benchmarks only).',
  },
  SHUTDOWN_GRACE_SECONDS: {
    schema: integer(0, 3600),
    default: '25',
    description:
      "On SIGTERM, how long running responses may go on before they are cut; keep it below the orchestrator's stop timeout.",
  },
  SYNC_HISTORY_DAYS: {
    schema: integer(1, 36_500),
    description:
      'Days of change history kept for sync tokens: `gwapi import measurements` prunes older history after each import, and an older token is answered 410 (sync again without changedSince). Unset: all history is kept.',
  },
  METRICS_PORT: {
    schema: integer(0, 65535),
    description:
      'Port of a separate listener on HOST serving Prometheus metrics at /metrics; keep it internal. Unset: no metrics.',
  },
} satisfies Record<string, Variable>;

type Variables = typeof variables;
export type SettingName = keyof Variables;

export type Settings = {
  [K in SettingName]: Variables[K] extends { default: string }
    ? z.output<Variables[K]['schema']>
    : z.output<Variables[K]['schema']> | undefined;
};

/** A bad or missing setting; its message is one line that names the variable. */
export class SettingsError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`invalid setting ${variable}: ${reason}`);
    this.name = 'SettingsError';
  }
}

/** Reads and validates every setting. An empty variable counts as unset. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const settings: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(variables) as [SettingName, Variable][]) {
    const raw = env[name] === '' ? undefined : env[name];
    const value = raw ?? variable.default;
    if (value === undefined) {
      settings[name] = undefined;
      continue;
    }
    const parsed = variable.schema.safeParse(value);
    if (!parsed.success) {
      const reason = parsed.error.issues[0]?.message ?? 'invalid value';
      const shown = variable.secret ? '' : ` (got ${JSON.stringify(value)})`;
      throw new SettingsError(name, `${reason}${shown}`);
    }
    settings[name] = parsed.data;
  }
  const { BULK_CONNECTIONS: bulk, DATABASE_POOL_MAX: pool } = settings as Settings;
  if (bulk !== undefined && bulk > pool) {
    throw new SettingsError('BULK_CONNECTIONS', `expected at most DATABASE_POOL_MAX (${pool}) (got ${bulk})`);
  }
  return settings as Settings;
}

/**
 * BULK_CONNECTIONS, or its default: a fifth of the pool. One process writes every pull's bytes on one
 * thread, so more pulls at once divide that thread rather than add to it, while each holds a database
 * session busy beside the short requests' (docs/decisions/0111-bulk-documents-share-of-the-pool.md).
 */
export const bulkConnections = (settings: {
  BULK_CONNECTIONS?: number | undefined;
  DATABASE_POOL_MAX: number;
}) => settings.BULK_CONNECTIONS ?? Math.max(1, Math.floor(settings.DATABASE_POOL_MAX / 5));

/** The settings table for `--help` and docs/operations/settings.md: name, default, description. */
export function describeSettings(): string {
  const rows = Object.entries(variables as Record<string, Variable>).map(
    ([name, v]) =>
      `  ${name.padEnd(22)} ${v.description}${v.default === undefined ? '' : ` [default: ${v.default}]`}`,
  );
  return `Settings (environment variables):\n${rows.join('\n')}`;
}
