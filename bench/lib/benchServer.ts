/**
 * The server side of the benchmarks, run as a child process of its own (serverProcess.ts) so that its
 * resident memory and CPU are its own. `api`: our app (buildApp, limits lifted, logging at info as in
 * production); it also runs the floor (a bare read of the rows) on request, so
 * the floor is measured in the same kind of process, and profiles itself on request (V8's sampling
 * profiler through node:inspector), so that a profile holds the workload and not the start-up.
 * `bare`: a bare Fastify route returning a constant, and one returning a constant body of a given size.
 *
 *   node --import tsx bench/lib/benchServer.ts api DATABASE_URL | bare
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadSettings } from '../../src/config.js';
import { connect } from '../../src/db/connect.js';
import { readFloor } from './floor.js';
import { type ParentMessage, SERVER_APPLICATION_NAME, type ServerMessage } from './serverProtocol.js';

const [kind, databaseUrl] = process.argv.slice(2);
const send = (message: ServerMessage) => process.send!(message);
// An orderly exit, so that `--cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));

function bareApp(): FastifyInstance {
  const app = Fastify();
  app.get('/', async () => ({ hello: 'world' }));
  // A constant body of COUNT bytes: what sending a response of that size costs, with nothing else.
  const bodies = new Map<number, Buffer>();
  app.get<{ Params: { count: string } }>('/bytes/:count', (request, reply) => {
    const count = Number(request.params.count);
    let body = bodies.get(count);
    if (!body) {
      body = randomBytes(count);
      bodies.set(count, body);
    }
    reply.type('application/json').send(body);
  });
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
  send({ type: 'listening', base: await app.listen({ host: '127.0.0.1', port: 0 }) });

  const profiler = new Session();
  process.on('message', async (message: ParentMessage) => {
    try {
      send(await answer(message));
    } catch (error) {
      send({ type: 'error', message: String(error) });
    }
  });

  async function answer(message: ParentMessage): Promise<ServerMessage> {
    switch (message.type) {
      case 'floor': {
        const started = performance.now();
        const rows = await readFloor(sql, message.request);
        return { type: 'floor', ms: performance.now() - started, rows };
      }
      case 'startProfile':
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
        return { type: 'profiling' };
      case 'stopProfile': {
        const { profile } = await profiler.post('Profiler.stop');
        profiler.disconnect();
        await writeFile(message.file, JSON.stringify(profile));
        return { type: 'profiled', file: message.file };
      }
    }
  }
}

start().catch((error) => {
  send({ type: 'error', message: String(error) });
  process.exit(1);
});
