/**
 * The Dockerfile, checked without a Docker engine: what its runtime stage promises (non-root, production
 * dependencies only, `gwapi` as entry point), that the build context holds every file it copies, that
 * its HEALTHCHECK command really tells a live server from a failing or absent one, and that it runs the
 * Node that package.json `engines` names and CI (.ci/run) tests on.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { missingHeapOptions, SERVICE_NODE_OPTIONS } from '../../src/heap.js';

const ROOT = new URL('../..', import.meta.url);

interface Instruction {
  keyword: string;
  args: string;
}

/** Dockerfile instructions, continuation lines joined and comments dropped. */
async function readDockerfile(): Promise<Instruction[]> {
  const text = await readFile(new URL('Dockerfile', ROOT), 'utf8');
  return text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [keyword = '', ...rest] = line.trim().split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

const instructions = await readDockerfile();
const lastFrom = instructions.findLastIndex((i) => i.keyword === 'FROM');
const runtime = instructions.slice(lastFrom);
const argsOf = (keyword: string) => runtime.filter((i) => i.keyword === keyword).map((i) => i.args);

t.test('the runtime stage runs gwapi as a non-root user with production dependencies only', async (t) => {
  t.match(instructions[lastFrom]?.args, /AS runtime$/);
  t.same(argsOf('ENTRYPOINT'), ['["node", "dist/cli.js"]']);
  t.same(argsOf('CMD'), ['["serve"]']);
  const user = argsOf('USER');
  t.equal(user.length, 1);
  t.notMatch(user[0], /^(root|0)(:|$)/, 'not root');
  t.match(argsOf('RUN').join('\n'), /npm ci --omit=dev --omit=optional --ignore-scripts/);
  t.same(
    argsOf('COPY').filter((a) => !a.startsWith('--from=')),
    ['package.json package-lock.json ./', 'sql ./sql'],
  );
  t.ok(argsOf('COPY').includes('--from=build /app/dist ./dist'), 'the compiled code from the build stage');
});

// gwapi adds each heap option NODE_OPTIONS does not set (test/commands/heap.test.ts): one set in the
// image would be a second source that wins over the first.
t.test('the image leaves the heap options to gwapi (src/heap.ts)', async (t) => {
  const nodeOptions = argsOf('ENV')
    .join(' ')
    .match(/NODE_OPTIONS=(?:"([^"]*)"|(\S+))/);
  t.same(missingHeapOptions([], nodeOptions?.[1] ?? nodeOptions?.[2]), SERVICE_NODE_OPTIONS);
});

const engines = JSON.parse(await readFile(new URL('package.json', ROOT), 'utf8')).engines?.node as string;
/** The Node major the project ships on: its one source is package.json `engines` (`>=24`). */
const nodeMajor = engines.match(/^>=(\d+)$/)?.[1];
/** The exact Node CI installs and tests on (.ci/run's NODE_VERSION). */
const ciNode = (await readFile(new URL('.ci/run', ROOT), 'utf8')).match(/^NODE_VERSION=(\S+)$/m)?.[1];

t.test('the image, CI and package.json engines agree on the Node the project ships on', async (t) => {
  t.ok(nodeMajor, `engines.node is >=MAJOR (${engines})`);
  const image = instructions
    .find((i) => i.keyword === 'ARG' && i.args.startsWith('NODE_IMAGE='))
    ?.args.slice('NODE_IMAGE='.length);
  t.match(image, /^node:\d+\.\d+\.\d+-bookworm-slim$/, 'a pinned Node image');
  const stages = instructions.filter((i) => i.keyword === 'FROM');
  t.ok(stages.length > 0 && stages.every((i) => /^\$\{NODE_IMAGE\}\s/.test(i.args)), 'every stage runs it');
  t.equal(image?.match(/^node:(\d+)\./)?.[1], nodeMajor, 'the image runs the engines major');
  t.equal(ciNode?.split('.')[0], nodeMajor, 'CI installs the engines major');
  t.equal(image, `node:${ciNode}-bookworm-slim`, 'CI tests the exact Node of the image');
});

// Elsewhere the suite may run on another Node (the machine's own, say); under CI it runs on the pinned one.
t.test(
  'under CI, the suite runs on the Node CI installs',
  { skip: process.env.CI ? false : `not under CI (this is Node ${process.versions.node})` },
  async (t) => {
    t.equal(process.versions.node, ciNode);
  },
);

t.test('.dockerignore lets in every file the Dockerfile copies, and nothing else', async (t) => {
  const patterns = (await readFile(new URL('.dockerignore', ROOT), 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  // Only the two forms this .dockerignore uses: `*` (everything) and `!name` (a top-level file or folder).
  t.ok(
    patterns.every((p) => p === '*' || /^![\w.-]+$/.test(p)),
    'patterns are * or !name',
  );
  const admitted = (path: string) =>
    patterns.reduce((inside, p) => (p === '*' ? false : p === `!${path}` ? true : inside), true);
  const sources = instructions
    .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from='))
    .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
  t.ok(sources.length > 0);
  for (const source of sources) t.ok(admitted(source), `${source} is in the build context`);
  for (const secret of ['.env', 'node_modules', '.gwapi', 'dist', 'test']) t.notOk(admitted(secret), secret);
});

t.test('the HEALTHCHECK command succeeds only when GET /health/live answers 2xx', async (t) => {
  const healthcheck = instructions.find((i) => i.keyword === 'HEALTHCHECK')?.args ?? '';
  const command = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
  t.equal(command[0], 'node', 'no curl needed');

  const check = (port: number) =>
    new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, command.slice(1), {
        env: { PATH: process.env.PATH ?? '', PORT: String(port) },
        cwd: fileURLToPath(ROOT),
        stdio: 'ignore',
      });
      child.on('exit', (code) => resolve(code));
    });

  let status = 200;
  const paths: string[] = [];
  const server = createServer((request, response) => {
    paths.push(request.url ?? '');
    response.writeHead(status).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  t.equal(await check(port), 0, 'live: exit 0');
  status = 503;
  t.equal(await check(port), 1, 'answering 503: exit 1');
  t.same(paths, ['/health/live', '/health/live']);
  await new Promise((resolve) => server.close(resolve));
  t.equal(await check(port), 1, 'nothing listening: exit 1');
});
