/**
 * The end-of-suite scan for keys (test/helpers/secrets.ts) finds what it must and only that: it is what
 * makes "no key in any log line" a check that can fail.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { generateApiKey } from '../../src/keys/format.js';
import { scanCaptures } from '../helpers/secrets.js';

function captures(t: Test, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'gwapi-scan-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const logLine = (fields: Record<string, unknown>) => `${JSON.stringify({ level: 30, ...fields })}\n`;
const clean = [
  logLine({
    reqId: '0b6c2d8e-6a3f-4f6e-9d7b-2f0c1c9e5a11',
    url: '/v1/gw_[redacted]',
    keyId: 'key_0123456789ab',
  }),
  logLine({ msg: 'request', url: `/v1/${'A'.repeat(60)}`, etag: 'W/"x3bQZcY9m2a8sUe1NqTgVh"' }),
].join('');

t.test('clean captures: nothing found, everything counted', async (t) => {
  const key = generateApiKey();
  const dir = captures(t, {
    'keys/1': `${key}\n`,
    'log/1-1-app': clean,
    'process/1-2-serve.stdout': clean,
    'keys-create/1-3-keys-create.stdout': `${generateApiKey()}\nkey_0123456789ab\n`,
    'demo/1-4-demo.stdout': `Demo key (shown only now):\n${generateApiKey()}\n  curl -H 'X-API-Key: ${key}'\n${clean}`,
  });
  const scan = scanCaptures(dir);
  t.same(scan.leaks, []);
  t.equal(scan.keys, 3, 'keys written down, and those shown by keys create and demo');
  t.equal(scan.files, 4);
  t.equal(scan.lines, 2 + 2 + 2, 'every line of logs and processes, only the log lines of the demo');
});

t.test('a whole key anywhere outside keys create and the demo banner is found', async (t) => {
  const key = generateApiKey();
  const dir = captures(t, {
    'log/1-1-app': clean + logLine({ msg: 'oops', headers: { 'x-api-key': key } }),
    'process/1-2-import.stderr': `gwapi: something about ${key}\n`,
    'demo/1-3-demo.stdout': `${key}\n${logLine({ msg: 'request', header: key })}`,
  });
  const leaks = scanCaptures(dir).leaks.map((leak) => `${leak.file.slice(dir.length)}:${leak.line}`);
  t.same(leaks.sort(), ['/demo/1-3-demo.stdout:2', '/log/1-1-app:3', '/process/1-2-import.stderr:1']);
});

t.test('any 19 characters of a known key are found, wherever they sit in a line', async (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 43 - 19 }),
      fc.integer({ min: 19, max: 43 }),
      fc.stringMatching(/^[A-Za-z0-9_-]{0,30}$/),
      fc.constantFrom('keys', 'keys-create'),
      (start, length, around, whereKnown) => {
        const key = generateApiKey();
        const fragment = key.slice(3).slice(start, start + length);
        if (fragment.length < 19) return true;
        const dir = mkdtempSync(join(tmpdir(), 'gwapi-scan-'));
        try {
          mkdirSync(join(dir, whereKnown));
          mkdirSync(join(dir, 'process'));
          writeFileSync(join(dir, whereKnown, '1'), `${key}\n`);
          writeFileSync(
            join(dir, 'process', '1-1-serve.stdout'),
            `${clean}{"msg":"x","v":"${around}${fragment}${around}"}\n`,
          );
          const { leaks } = scanCaptures(dir);
          return leaks.length === 1 && leaks[0]!.line === 3;
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    ),
    { numRuns: 300 },
  );
  t.pass('every fragment found');
});

t.test('without captures there is nothing to scan and nothing found', async (t) => {
  const dir = captures(t, {});
  t.same(scanCaptures(dir), { files: 0, lines: 0, keys: 0, leaks: [] });
});
