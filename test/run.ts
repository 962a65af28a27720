/**
 * `npm test`: runs the tap suite against a real PostgreSQL and a real Redis. When TEST_DATABASE_URL /
 * TEST_REDIS_URL are not given, it starts throwaway servers (an embedded PostgreSQL in a temporary
 * folder, a `redis-server` on a free port) and removes them afterwards. Extra arguments go to tap.
 * Where native TimescaleDB is built (testkit/timescale.ts) and TEST_TIMESCALE_URL is not given, a
 * throwaway one serves the files that need the extension; without either, those files are skipped.
 * `--fast` (`npm run test:fast`) stands for FAST_TIER.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CAPTURE_DIR_VARIABLE, readWarnings, warningCaptureOptions } from '../testkit/outputCapture.js';
import { postgresOrThrowaway } from '../testkit/postgres.js';
import { redisOrThrowaway } from '../testkit/redis.js';
import { startTimescale, timescaleMissing } from '../testkit/timescale.js';
import { scanCaptures } from './helpers/secrets.js';

/**
 * The files a change can run in a few minutes (CONTRIBUTING): the checks of code and pages, the domain,
 * the engine, keys, limits, the importer and sync at their core, and the TimescaleDB path's own. Not
 * here: drills, deployment, replicas, faults, the CLI's processes, HTTP end to end and long properties.
 */
const FAST_TIER = [
  'test/*.test.ts',
  'test/domain/*.test.ts',
  'test/engine/!(dayRollups).test.ts',
  'test/keys/*.test.ts',
  'test/limits/{clientAddress,memory,redis,settings}.test.ts',
  'test/importers/progress.test.ts',
  'test/importers/registry/registry.test.ts',
  'test/importers/measurements/{corrections,decimal.property,measurements,status,timescaledb}.test.ts',
  'test/importers/formats/{gldCsv,dinoCsv}.test.ts',
  'test/sync/{sync,timescaledb,token}.test.ts',
  'test/db/{aggregateBuckets,timescaledb}.test.ts',
];
const args = process.argv.slice(2).flatMap((arg) => (arg === '--fast' ? FAST_TIER : [arg]));

const env = { ...process.env };
// Test files run in parallel, each with databases of its own on this one server.
const postgres = await postgresOrThrowaway(env.TEST_DATABASE_URL, { max_connections: '300' });
const redis = await redisOrThrowaway(env.TEST_REDIS_URL);
env.TEST_DATABASE_URL = postgres.url;
env.TEST_REDIS_URL = redis.url;
const timescale = env.TEST_TIMESCALE_URL || timescaleMissing() ? undefined : await startTimescale();
if (timescale) env.TEST_TIMESCALE_URL = timescale.url;
if (!env.TEST_TIMESCALE_URL) console.log(`${timescaleMissing()}: its tests are skipped`);

// Every log line and every gwapi process output of the suite is kept here and scanned for keys at the end.
const captureDir = await mkdtemp(join(tmpdir(), 'gwapi-test-capture-'));
env[CAPTURE_DIR_VARIABLE] = captureDir;
process.env[CAPTURE_DIR_VARIABLE] = captureDir;
// So are the process warnings of tap, of every test file and of what they start with this environment.
env.NODE_OPTIONS = [env.NODE_OPTIONS, ...warningCaptureOptions().map((option) => `"${option}"`)]
  .filter(Boolean)
  .join(' ');

const tap = spawn(process.execPath, [join('node_modules', 'tap', 'dist', 'esm', 'run.mjs'), ...args], {
  env,
  stdio: 'inherit',
});
const code = await new Promise<number>((resolve) =>
  tap.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
for (const server of [redis, postgres, timescale]) await server?.stop().catch(() => {});

const scan = scanCaptures(captureDir);
const scanned = `${scan.lines.toLocaleString('en-US')} lines of ${scan.files} captured logs and outputs`;
if (scan.leaks.length === 0) {
  console.log(`secrets: no API key in ${scanned} (${scan.keys} keys created by the suite)`);
} else {
  console.log(`secrets: ${scan.leaks.length} lines with an API key in ${scanned}; kept in ${captureDir}`);
  for (const leak of scan.leaks.slice(0, 20)) console.log(`  ${leak.file}:${leak.line}: ${leak.what}`);
}
// A warning is a fault the suite would otherwise pass over: a listener leak, a deprecated API.
const warnings = readWarnings(captureDir);
if (warnings.length === 0) console.log('warnings: no process warning in the suite');
else {
  console.log(`warnings: ${warnings.length} process warnings in the suite; kept in ${captureDir}`);
  for (const { process: where, warning, at } of warnings.slice(0, 20)) {
    console.log(`  ${where}: ${warning}`);
    for (const frame of at) console.log(`      ${frame}`);
  }
}
const clean = scan.leaks.length === 0 && warnings.length === 0;
if (clean) await rm(captureDir, { recursive: true, force: true });
process.exit(clean ? code : code || 1);
