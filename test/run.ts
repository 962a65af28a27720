/**
 * `npm test`: runs the tap suite against a real PostgreSQL and a real Redis. When TEST_DATABASE_URL /
 * TEST_REDIS_URL are not given, it starts throwaway servers (an embedded PostgreSQL in a temporary
 * folder, a `redis-server` on a free port) and removes them afterwards. Extra arguments go to tap.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { startRedis } from './helpers/redis-server.js';
import { CAPTURE_DIR_VARIABLE, scanCaptures } from './helpers/secrets.js';

const cleanups: (() => Promise<unknown>)[] = [];
const env = { ...process.env };

if (!env.TEST_DATABASE_URL) {
  const dir = await mkdtemp(join(tmpdir(), 'gwapi-test-pg-'));
  await chmod(dir, 0o755); // run as root, the server runs as `postgres` and must reach its folder
  const postgres = await startEmbeddedPostgres({
    dir: join(dir, 'data'),
    persistent: false,
    // Durability is irrelevant for a throwaway cluster; speed is not.
    settings: { fsync: 'off', full_page_writes: 'off', max_connections: '300' },
  });
  env.TEST_DATABASE_URL = postgres.url;
  cleanups.push(() => postgres.stop().then(() => rm(dir, { recursive: true, force: true })));
}
if (!env.TEST_REDIS_URL) {
  const redis = await startRedis();
  env.TEST_REDIS_URL = redis.url;
  cleanups.push(redis.stop);
}

// Every log line and every gwapi process output of the suite is kept here and scanned for keys at the end.
const captureDir = await mkdtemp(join(tmpdir(), 'gwapi-test-capture-'));
env[CAPTURE_DIR_VARIABLE] = captureDir;

const tap = spawn(
  process.execPath,
  [join('node_modules', 'tap', 'dist', 'esm', 'run.mjs'), ...process.argv.slice(2)],
  {
    env,
    stdio: 'inherit',
  },
);
const code = await new Promise<number>((resolve) =>
  tap.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});

const scan = scanCaptures(captureDir);
const scanned = `${scan.lines.toLocaleString('en-US')} lines of ${scan.files} captured logs and outputs`;
if (scan.leaks.length === 0) {
  console.log(`secrets: no API key in ${scanned} (${scan.keys} keys created by the suite)`);
  await rm(captureDir, { recursive: true, force: true });
} else {
  console.log(`secrets: ${scan.leaks.length} lines with an API key in ${scanned}; kept in ${captureDir}`);
  for (const leak of scan.leaks.slice(0, 20)) console.log(`  ${leak.file}:${leak.line}: ${leak.what}`);
}
process.exit(scan.leaks.length === 0 ? code : code || 1);
