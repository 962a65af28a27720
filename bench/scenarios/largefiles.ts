/**
 * Large files: a BRO GLD dispatch and a FEWS PI-XML file of MB megabytes each, generated as they are
 * written (never held whole) and imported by `gwapi import bro-gld` and `gwapi import fews` on a terminal
 * of their own, as an operator runs them. Meanwhile the CLI's resident memory (VmRSS) and how far it has
 * read the file (its descriptor's offset) are sampled from /proc every 100 ms. Bound: flat, the resident
 * set once the whole file is read within 20 % of what it was at a tenth of it (100 MB of a gigabyte).
 * Also the progress line the terminal showed: how many times it was rewritten, and its last text.
 *
 *   npm run bench -- largefiles [MB]     (200; 1000 for the gigabyte of issue 37; DATABASE_URL, or an
 *                                        embedded PostgreSQL)
 *
 * Each file goes into a fresh database (the GLD's tube registered first, as its command needs), and is
 * removed once imported; the stored rows are counted against the points generated.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../../src/db/connect.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { numberArguments } from '../../testkit/arguments.js';
import { createDatabase, migrateAlone, postgresOrThrowaway } from '../../testkit/postgres.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, loadLine, machineLine, mb, printTable, ratio } from '../../testkit/report.js';
import { fewsPointsFor, gldPointsFor, gldRegistry, writeFewsXml, writeGldXml } from '../lib/fieldFiles.js';
import { gwapiImport, progressLines, type Sample, scriptCommand } from '../lib/gwapiImport.js';
import { DURABLE_SETTINGS } from '../lib/importFixture.js';

requirePrerequisites([throwawayPostgres, scriptCommand]);

const [MB] = numberArguments(200);
const BYTES = MB * 1e6;
const GLD_TUBE = { well: 'GMW000000038947', tubeNumber: '1' };

const folder = await mkdtemp(join(tmpdir(), 'gwapi-bench-largefiles-'));
const postgres = await postgresOrThrowaway(process.env.DATABASE_URL, DURABLE_SETTINGS);
const admin = connect(postgres.url, { max: 1, applicationName: 'gwapi bench largefiles' });

/** The first sample at or past `bytes` read, and the last one while the file was open. */
function atMarks(samples: Sample[], bytes: number) {
  const reading = samples.filter((sample) => sample.read !== undefined);
  const tenth = reading.find((sample) => sample.read! >= bytes / 10);
  const whole = reading.at(-1);
  const after = samples.filter((sample) => tenth !== undefined && sample.ms >= tenth.ms);
  return {
    tenth,
    whole,
    highest: Math.max(...after.map((sample) => sample.rssMb)),
    peak: samples.at(-1)?.peakMb,
  };
}

try {
  console.log(`Large files — ${await machineLine()}; ${await loadLine()}`);
  const rows: string[][] = [];
  const progress: string[] = [];
  const files = [
    {
      label: 'BRO GLD XML (bro-gld)',
      command: 'bro-gld',
      points: gldPointsFor(BYTES),
      write: (path: string, points: number) =>
        writeGldXml(path, { ...GLD_TUBE, points, stepMinutes: 5, pointsPerObservation: 105_120 }),
      registry: gldRegistry(GLD_TUBE),
    },
    {
      label: 'FEWS PI-XML (fews)',
      command: 'fews',
      points: fewsPointsFor(BYTES),
      write: writeFewsXml,
      registry: [],
    },
  ];
  for (const [n, file] of files.entries()) {
    const path = join(folder, `${file.command}.xml`);
    const generating = performance.now();
    await file.write(path, file.points);
    const size = (await stat(path)).size;
    console.log(
      `${file.label}: ${count(file.points)} points, ${mb(size / 1e6)} written in ` +
        `${((performance.now() - generating) / 1000).toFixed(0)} s; ${await loadLine()}`,
    );
    const url = await createDatabase(admin, postgres.url, `bench_largefiles_${n}`);
    await migrateAlone(url);
    const sql = connect(url, { max: 1 });
    try {
      if (file.registry.length > 0) await upsertRegistry(sql, file.registry);
      const run = await gwapiImport([file.command, path], url, { terminal: true, sample: path });
      if (run.code !== 0)
        throw new Error(`gwapi import ${file.command} exited with ${run.code}:\n${run.output}`);
      const [stored] = await sql<{ rows: number }[]>`select count(*)::int as rows from measurements`;
      if (stored!.rows !== file.points)
        throw new Error(`${stored!.rows} rows stored of ${file.points} points`);
      const { tenth, whole, highest, peak } = atMarks(run.samples, size);
      if (!tenth || !whole) throw new Error(`too few samples of ${file.label}: ${run.samples.length}`);
      const growth = whole.rssMb / tenth.rssMb;
      rows.push([
        file.label,
        mb(size / 1e6),
        `${run.seconds.toFixed(0)} s`,
        `${mb(tenth.rssMb)} (${mb(tenth.read! / 1e6)} read)`,
        `${mb(whole.rssMb)} (${mb(whole.read! / 1e6)} read)`,
        ratio(growth),
        mb(highest),
        peak === undefined ? '' : mb(peak),
        growth <= 1.2 && highest / tenth.rssMb <= 1.2 ? 'yes' : 'NO',
      ]);
      const shown = progressLines(run.output);
      const report = run.output.split('\r\x1b[K').at(-1)!.trim();
      progress.push(
        `${file.label}: the progress line was shown ${shown.length} times` +
          `${shown.length > 0 ? `, last "${shown.at(-1)}"` : ''}; then: ${report}`,
      );
    } finally {
      await sql.end({ timeout: 1 });
      await admin.unsafe(`drop database bench_largefiles_${n} with (force)`);
      await rm(path, { force: true });
    }
  }
  console.log();
  printTable(
    [
      'CLI resident memory',
      'file',
      'import',
      'at a tenth read',
      'when all is read',
      'ratio',
      'highest after a tenth',
      'peak (VmHWM)',
      'flat (≤ 1.2×)',
    ],
    rows,
  );
  for (const line of progress) console.log(line);
  console.log(`${await loadLine()} at the end`);
} finally {
  await admin.end({ timeout: 5 });
  await postgres.stop();
  await rm(folder, { recursive: true, force: true });
}
