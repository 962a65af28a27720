/**
 * LOG_FORMAT: JSON lines for machines (the default off a terminal, unchanged), readable lines for a
 * person at a terminal, and neither ever shows a key. Real `gwapi serve` processes, on pipes and on a
 * pseudo-terminal (util-linux `script`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import t from 'tap';
import { chooseLogFormat } from '../../../src/http/observability/logging.js';
import { addKey } from '../../../testkit/fixtures.js';
import { GWAPI_CLI } from '../../../testkit/gwapi.js';
import { exited, untilReady } from '../../../testkit/processes.js';
import { runCli, spawnCli } from '../../helpers/cli.js';
import { freshDatabase } from '../../helpers/database.js';
import { get } from '../../helpers/http.js';
import { startReplica } from '../../helpers/serve.js';

const SERVE_ENV = { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' };
/** pino-pretty's line: `[HH:MM:ss.l] LEVEL (…): message`, colours removed. */
const PRETTY_LINE = /^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN)( \([^)]*\))?: \S/;
const isJson = (line: string) => {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
};

/** Collects everything `child` writes to standard output until it ends. */
function outputOf(child: ChildProcess): () => string {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return () => output;
}

/** Resolves with the address of a pretty `gwapi listening` line. */
const untilListening = (child: ChildProcess) =>
  untilReady(
    child,
    (line) => (line.includes('gwapi listening') ? /"address":"([^"]+)"/.exec(line)?.[1] : undefined),
    {
      what: 'gwapi serve',
      timeoutMs: 60_000,
      afterReady: () => {},
    },
  );

t.test('LOG_FORMAT when set; otherwise pretty on a terminal only', async (t) => {
  t.equal(chooseLogFormat(undefined, true), 'pretty');
  t.equal(chooseLogFormat(undefined, false), 'json');
  t.equal(chooseLogFormat('json', true), 'json');
  t.equal(chooseLogFormat('pretty', false), 'pretty');
});

t.test('LOG_FORMAT=pretty: readable lines with level and message, and no key', async (t) => {
  const db = await freshDatabase(t);
  const { key, keyId } = await addKey(db.sql, { allTubes: true });
  const child = spawnCli(['serve'], { env: { ...SERVE_ENV, DATABASE_URL: db.url, LOG_FORMAT: 'pretty' } });
  t.teardown(() => child.kill('SIGKILL'));
  const output = outputOf(child);
  const base = await untilListening(child);
  t.equal((await get(base!, '/v1/groundwater-monitoring-wells', { 'x-api-key': key })).status, 200);
  t.equal((await get(base!, `/v1/groundwater-monitoring-wells?pasted=${key}`)).status, 401);
  child.kill('SIGTERM');
  await exited(child);

  const lines = output().trimEnd().split('\n');
  t.ok(lines.length >= 4, 'start, requests and shutdown');
  for (const line of lines) {
    t.notOk(isJson(line), `not JSON: ${line}`);
    t.match(line, PRETTY_LINE, 'time, level and message');
  }
  t.ok(lines.some((line) => /INFO.*: gwapi listening/.test(line)));
  t.ok(
    lines.some(
      (line) =>
        /INFO.*: GET \/v1\/groundwater-monitoring-wells 200 [\d.]+ ms \{.*"keyId":"/.test(line) &&
        line.includes(keyId),
    ),
    'a request line reads method, path, status and duration, then the rest',
  );
  t.notMatch(output(), key, 'the key is not shown');
  t.match(output(), 'pasted=gw_[redacted]', 'a key pasted into a URL is scrubbed before it is formatted');
});

t.test('LOG_FORMAT=json and no LOG_FORMAT off a terminal: JSON lines', async (t) => {
  const db = await freshDatabase(t);
  for (const format of ['json', undefined]) {
    // spawnReplica reads every line as JSON and fails on any other.
    const replica = await startReplica(t, { DATABASE_URL: db.url, LOG_FORMAT: format });
    await get(replica.base, '/health/live');
    await replica.stop();
    t.ok(
      replica.logs.some((line) => line.msg === 'gwapi listening'),
      `LOG_FORMAT=${format}: the listening line`,
    );
    t.ok(
      replica.logs.some((line) => line.msg === 'shutting down'),
      `LOG_FORMAT=${format}: the line at the end`,
    );
  }
});

t.test('on a terminal, without LOG_FORMAT: pretty lines, and Ctrl-C stops the server', async (t) => {
  const db = await freshDatabase(t);
  // exec: Ctrl-C reaches gwapi alone, not a shell that would die of it after gwapi stopped cleanly.
  const command = `exec ${[process.execPath, '--import', 'tsx', GWAPI_CLI, 'serve'].map((a) => `'${a}'`).join(' ')}`;
  // -e: the exit code of gwapi; -f: each line as soon as it is written.
  const child = spawn('script', ['-qefc', command, '/dev/null'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: db.url,
      ...SERVE_ENV,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  const output = outputOf(child);
  await untilListening(child);
  child.stdin.write('\x03');
  const code = await new Promise((resolve) => child.on('close', resolve));

  t.equal(code, 0, 'a graceful stop');
  const lines = stripVTControlCharacters(output())
    .split(/\r?\n/)
    // The terminal echoes Ctrl-C as ^C before the next line.
    .map((line) => line.replace(/^\^C/, ''))
    .filter((line) => line !== '');
  t.ok(
    lines.some((line) => /^\[[\d:.]+\] INFO.*: gwapi listening/.test(line)),
    'the listening line',
  );
  t.ok(
    lines.some((line) => /^\[[\d:.]+\] INFO.*: shutting down/.test(line)),
    'the shutdown line',
  );
  for (const line of lines) t.match(line, PRETTY_LINE, `time, level and message: ${line}`);
});

t.test('a bad LOG_FORMAT stops gwapi with one line naming it', async (t) => {
  const result = await runCli(['serve'], { env: { LOG_FORMAT: 'yaml' } });
  t.equal(result.code, 2);
  t.equal(result.stderr, 'gwapi: invalid setting LOG_FORMAT: expected json or pretty (got "yaml")\n');
  t.equal(result.stdout, '');
});
