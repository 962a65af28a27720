/**
 * The picture of the client guide: docs/latest-map.py draws the demo's `latest` layer with QGIS
 * (Debian's python3-qgis, headless) from a real `gwapi serve` on the demo's data with the demo's key: the
 * layer holds a feature for every tube the key reads, and the picture has the size of the one the guide
 * shows. UPDATE_PICTURE=1 writes that one (docs/latest-map.png) with the script's output.
 */
import { execFile } from 'node:child_process';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { createDemoKey, seedDemo } from '../../../src/demo/seed.js';
import { DEMO_TUBES, HIDDEN_DEMO_TUBE } from '../../../src/demo/wells.js';
import { PYTHON, qgis } from '../../../testkit/prerequisites.js';
import { freshDatabase } from '../../helpers/database.js';
import { unlessInstalled } from '../../helpers/installed.js';
import { startReplica } from '../../helpers/serve.js';

const SCRIPT = fileURLToPath(new URL('../../../docs/latest-map.py', import.meta.url));
const PICTURE = fileURLToPath(new URL('../../../docs/latest-map.png', import.meta.url));
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from a PNG's header chunk. */
const pngSize = (png: Buffer) => {
  if (!png.subarray(0, 8).equals(PNG_SIGNATURE)) throw new Error('not a PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
};

t.test("docs/latest-map.py draws the demo's latest layer", { skip: unlessInstalled(qgis) }, async (t) => {
  const db = await freshDatabase(t);
  await seedDemo(db.sql);
  const { key } = await createDemoKey(db.sql);
  const replica = await startReplica(t, { DATABASE_URL: db.url, LIMITS_ENABLED: 'false' });
  const directory = t.testdir({});
  const output = join(directory, 'latest-map.png');
  const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, output], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      // Of its own: QGIS keeps an HTTP cache there.
      HOME: directory,
      BASE: `${replica.base}/v1`,
      KEY: key,
    },
  });
  const readable = DEMO_TUBES.filter((tube) => tube !== HIDDEN_DEMO_TUBE);
  t.equal(Number(stdout.trim()), readable.length, 'a feature per tube the demo key reads');
  const drawn = await readFile(output);
  if (process.env.UPDATE_PICTURE === '1') await copyFile(output, PICTURE);
  t.same(pngSize(drawn), pngSize(await readFile(PICTURE)), 'the size of the picture the guide shows');
});
