/**
 * The server side of the benchmarks, run as a child process of its own (serverProcess.ts) so that its
 * resident memory and CPU are its own. `api`: our app (buildApp, limits lifted, logging at info as in
 * production) plus the buffered baseline routes; it also runs the floor (a bare cursor loop) on request, so
 * the floor is measured in the same kind of process. `bare`: a bare Fastify route returning a constant.
 *
 *   node --import tsx bench/lib/benchServer.ts api DATABASE_URL | bare
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { loadSettings } from '../../src/config.js';
import { connect } from '../../src/db/connect.js';
import { type FloorRequest, readWithCursor, readWithDeclaredCursor } from './floor.js';
import { registerBaselines } from './naiveSeries.js';
import { SERVER_APPLICATION_NAME } from './serverProcess.js';

export type ServerMessage =
  | { type: 'listening'; base: string }
  | { type: 'floor'; ms: number; rows: number }
  | { type: 'error'; message: string };

export type ParentMessage = { type: 'floor'; request: FloorRequest };

const [kind, databaseUrl] = process.argv.slice(2);
const send = (message: ServerMessage) => process.send!(message);
// An orderly exit, so that `--cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));

function bareApp(): FastifyInstance {
  const app = Fastify();
  app.get('/', async () => ({ hello: 'world' }));
  return app;
}

async function start(): Promise<void> {
  if (kind === 'bare') {
    const app = bareApp();
    send({ type: 'listening', base: await app.listen({ host: '127.0.0.1', port: 0 }) });
    return;
  }
  if (kind !== 'api' || !databaseUrl) throw new Error('usage: benchServer.ts api DATABASE_URL | bare');
  const settings = loadSettings({ LOG_LEVEL: 'info', LIMITS_ENABLED: 'false' });
  const sql = connect(databaseUrl, {
    max: settings.DATABASE_POOL_MAX,
    applicationName: SERVER_APPLICATION_NAME,
  });
  const app = buildApp({ sql, settings });
  registerBaselines(app, sql);
  send({ type: 'listening', base: await app.listen({ host: '127.0.0.1', port: 0 }) });

  process.on('message', async (message: ParentMessage) => {
    try {
      const read = message.request.method === 'cursor' ? readWithCursor : readWithDeclaredCursor;
      const started = performance.now();
      const rows = await read(sql, message.request);
      send({ type: 'floor', ms: performance.now() - started, rows });
    } catch (error) {
      send({ type: 'error', message: String(error) });
    }
  });
}

start().catch((error) => {
  send({ type: 'error', message: String(error) });
  process.exit(1);
});
