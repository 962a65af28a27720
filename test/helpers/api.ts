/**
 * A real API server for a test: a fresh migrated database, the app on its own pool (so tests can watch
 * its connections in pg_stat_activity), listening on a free port, with its log lines captured.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { buildApp } from '../../src/app.js';
import { loadSettings, type Settings } from '../../src/config.js';
import { connect, type Sql } from '../../src/db/connect.js';
import type { ServiceMetrics } from '../../src/http/observability/metrics.js';
import type { ClientLimits } from '../../src/limits/types.js';
import { logCapture } from '../../testkit/outputCapture.js';
import { freshDatabase, type TestDatabase } from './database.js';

export interface TestApi {
  /** `http://127.0.0.1:PORT` */
  base: string;
  port: number;
  app: FastifyInstance;
  /** The app's own pool. */
  appSql: Sql;
  /** Shown as application_name of the app's connections. */
  applicationName: string;
  db: TestDatabase;
  settings: Settings;
  /** Every log line the app wrote so far, raw. */
  logLines: string[];
}

export interface TestApiOptions {
  env?: Record<string, string>;
  limits?: ClientLimits;
  poolMax?: number;
  /** Reuse a database (several apps on one database). */
  db?: TestDatabase;
  /** Where the app's pool connects instead of the test database (one that does not answer, say). */
  databaseUrl?: string;
  metrics?: ServiceMetrics;
  /** How long a client may take to send its request (the app's default when not given). */
  requestTimeoutMs?: number;
}

export async function startApi(t: Test, options: TestApiOptions = {}): Promise<TestApi> {
  const db = options.db ?? (await freshDatabase(t));
  const settings = loadSettings({ LOG_LEVEL: 'info', ...options.env });
  const applicationName = `gwapi-test-${Math.random().toString(36).slice(2, 10)}`;
  const appSql = connect(options.databaseUrl ?? db.url, { max: options.poolMax ?? 4, applicationName });
  const logLines: string[] = [];
  const capture = logCapture(applicationName);
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      capture(chunk.toString());
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const app = buildApp({
    sql: appSql,
    settings,
    logStream,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  t.teardown(async () => {
    await app.close();
    await appSql.end({ timeout: 1 });
  });
  return {
    base: `http://127.0.0.1:${address.port}`,
    port: address.port,
    app,
    appSql,
    applicationName,
    db,
    settings,
    logLines,
  };
}
