/**
 * The importers of the field's files against `gwapi import measurements` of the same points: a BRO GLD
 * dispatch (one tube, 15-minute levels), DINO files (daily levels, a filter a file) and a FEWS PI-XML
 * file (a logger's year of 15-minute levels a series), each beside its twin, the same points as the
 * CSV `gwapi import measurements` reads (with the status column: the same statuses land). Bound: each at
 * most 2× its twin.
 *
 *   npm run bench -- importers [POINTS] [ROUNDS]     (200,000 points, 5 rounds; DATABASE_URL, or an
 *                                                    embedded PostgreSQL)
 *
 * Each import is the `gwapi` command as an operator runs it, a process of its own timed from start to
 * exit, into a fresh migrated database (the twin's tubes registered beforehand, and the GLD's tube for
 * the GLD, as its command needs); then the same command again on that database (a re-import: every
 * point unchanged). The format and its twin follow each other, in turns (ABBA over the rounds). The
 * start-up of `gwapi import` (Node, tsx, the connection, nothing imported) is timed in each round as the
 * import of a one-row CSV, and the ratios of the medians are also given net of its median. Before
 * anything is reported, each database's points are checked against the twin's: per tube and status the
 * same count, sum of millimetres and first and last time, and POINTS in all; and unchanged by the
 * re-import. The DINO twin is one CSV of daily levels, whose rollups the CSV import keeps in memory to
 * the end: past some 400,000 points it exceeds the CLI's heap (docs/performance.md).
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Sql } from '../../src/db/connect.js';
import { type RegistryWell, upsertRegistry } from '../../src/importers/registry/registry.js';
import { numberArguments } from '../../testkit/arguments.js';
import { createDatabase, migrateAlone, postgresOrThrowaway } from '../../testkit/postgres.js';
import { requirePrerequisites, throwawayPostgres } from '../../testkit/prerequisites.js';
import { count, loadLine, machineLine, median, printTable, ratio } from '../../testkit/report.js';
import {
  dinoRegistry,
  fewsRegistry,
  fewsSeries,
  gldRegistry,
  writeDinoCsvs,
  writeFewsXml,
  writeGldXml,
} from '../lib/fieldFiles.js';
import { gwapiImport } from '../lib/gwapiImport.js';
import { DURABLE_SETTINGS } from '../lib/importFixture.js';

requirePrerequisites([throwawayPostgres]);

const [POINTS, ROUNDS] = numberArguments(200_000, 5);
const GLD_TUBE = { well: 'GMW000000038946', tubeNumber: '1' };

interface Format {
  label: string;
  /** `gwapi import` arguments of the file(s). */
  args: string[];
  /** The CSV of the same points. */
  twin: string;
  /** Tubes registered before the format's import (GLD), and before the twin's (every format). */
  registry: RegistryWell[];
  registeredFirst: boolean;
  bytes: number;
}

const seconds = (s: number) => `${s.toFixed(2)} s`;
const folder = await mkdtemp(join(tmpdir(), 'gwapi-bench-importers-'));
const postgres = await postgresOrThrowaway(process.env.DATABASE_URL, DURABLE_SETTINGS);
const admin = connect(postgres.url, { max: 1, applicationName: 'gwapi bench importers' });
let databases = 0;

/** A fresh migrated database holding `registry`; its URL. */
async function freshDatabase(registry: RegistryWell[]): Promise<string> {
  const url = await createDatabase(admin, postgres.url, `bench_importers_${databases++}`);
  await migrateAlone(url);
  if (registry.length > 0) {
    const sql = connect(url, { max: 1 });
    await upsertRegistry(sql, registry).finally(() => sql.end({ timeout: 1 }));
  }
  return url;
}

async function dropDatabase(url: string): Promise<void> {
  await admin.unsafe(`drop database ${new URL(url).pathname.slice(1)} with (force)`);
}

/** What a database holds, per tube and status: the same for two imports of the same points. */
async function fingerprint(url: string): Promise<{ rows: number; text: string }> {
  const sql: Sql = connect(url, { max: 1 });
  try {
    const groups = await sql<{ tube: string; status: number; rows: number }[]>`
      select t.identifier::text as tube, m.status, count(*)::int as rows,
             sum(round(m.value * 1000))::bigint::text as millimetres,
             min(m.observed_at)::text as first, max(m.observed_at)::text as last
      from measurements m join tubes t on t.id = m.tube_id
      group by 1, 2 order by 1, 2`;
    return { rows: groups.reduce((n, group) => n + group.rows, 0), text: JSON.stringify(groups) };
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** The command's first import into a fresh database, and its re-import: seconds of each, and what it left. */
async function importTwice(args: string[], registry: RegistryWell[]) {
  const url = await freshDatabase(registry);
  try {
    const timedRun = async () => {
      const run = await gwapiImport(args, url);
      if (run.code !== 0)
        throw new Error(`gwapi import ${args.join(' ')} exited with ${run.code}:\n${run.stderr}`);
      return run;
    };
    const first = await timedRun();
    const left = await fingerprint(url);
    const again = await timedRun();
    const leftAgain = await fingerprint(url);
    if (leftAgain.text !== left.text) throw new Error(`the re-import of ${args[0]} changed what was stored`);
    return {
      first: first.seconds,
      again: again.seconds,
      left,
      report: first.output.trim().split('\n').at(-1),
    };
  } finally {
    await dropDatabase(url);
  }
}

try {
  console.log(`Importers — ${await machineLine()}; ${await loadLine()}`);
  const gld = join(folder, 'GLD000000099001.xml');
  const gldTwin = join(folder, 'gld.csv');
  await writeGldXml(gld, {
    ...GLD_TUBE,
    points: POINTS,
    stepMinutes: 15,
    pointsPerObservation: 35_040,
    twin: gldTwin,
  });
  const dinoTwin = join(folder, 'dino.csv');
  const dinoFiles = await writeDinoCsvs(folder, POINTS, dinoTwin);
  const fews = join(folder, 'fews.xml');
  const fewsTwin = join(folder, 'fews.csv');
  await writeFewsXml(fews, POINTS, fewsTwin);
  const bytes = async (paths: string[]) =>
    (await Promise.all(paths.map((path) => stat(path)))).reduce((n, s) => n + s.size, 0);
  const formats: Format[] = [
    {
      label: 'BRO GLD XML (bro-gld)',
      args: ['bro-gld', gld],
      twin: gldTwin,
      registry: gldRegistry(GLD_TUBE),
      registeredFirst: true,
      bytes: await bytes([gld]),
    },
    {
      label: `DINO CSV (dino, ${dinoFiles.length} files)`,
      args: ['dino', ...dinoFiles.map((file) => file.path)],
      twin: dinoTwin,
      registry: dinoRegistry(dinoFiles.length),
      registeredFirst: false,
      bytes: await bytes(dinoFiles.map((file) => file.path)),
    },
    {
      label: `FEWS PI-XML (fews, ${fewsSeries(POINTS)} series)`,
      args: ['fews', fews],
      twin: fewsTwin,
      registry: fewsRegistry(fewsSeries(POINTS)),
      registeredFirst: false,
      bytes: await bytes([fews]),
    },
  ];
  const oneRow = join(folder, 'one-row.csv');
  const [gldTube] = gldRegistry(GLD_TUBE)[0]!.tubes;
  await writeFile(
    oneRow,
    `tubeIdentifier,observedAt,value\n${gldTube!.identifier},2024-01-01T00:00:00Z,-1.5\n`,
  );
  for (const format of formats) {
    console.log(
      `${format.label}: ${count(POINTS)} points, ${(format.bytes / 1e6).toFixed(1)} MB; ` +
        `its twin ${((await stat(format.twin)).size / 1e6).toFixed(1)} MB`,
    );
  }
  console.log(`${ROUNDS} rounds (and a warm-up), each import a gwapi process into a fresh database\n`);

  const times = formats.map(() => ({
    format: [] as number[],
    twin: [] as number[],
    formatAgain: [] as number[],
    twinAgain: [] as number[],
  }));
  const startUp: number[] = [];
  const reports = new Map<string, string | undefined>();
  for (let round = 0; round <= ROUNDS; round++) {
    const warmUp = round === 0;
    const startUpRun = await importTwice(['measurements', oneRow], gldRegistry(GLD_TUBE));
    if (!warmUp) startUp.push(startUpRun.first);
    for (const [f, format] of formats.entries()) {
      const runFormat = () => importTwice(format.args, format.registeredFirst ? format.registry : []);
      const runTwin = () => importTwice(['measurements', format.twin], format.registry);
      // ABBA: which goes first alternates, so that a drift in the machine's load favours neither.
      const [ofFormat, ofTwin] =
        round % 2 === 0
          ? [await runFormat(), await runTwin()]
          : await runTwin().then(async (twin) => [await runFormat(), twin] as const);
      if (ofFormat.left.rows !== POINTS || ofFormat.left.text !== ofTwin.left.text) {
        throw new Error(
          `${format.label} stored other points than its twin: ${ofFormat.left.rows} rows against ${ofTwin.left.rows}`,
        );
      }
      reports.set(format.label, ofFormat.report);
      reports.set(`${format.label}, twin`, ofTwin.report);
      if (warmUp) continue;
      times[f]!.format.push(ofFormat.first);
      times[f]!.twin.push(ofTwin.first);
      times[f]!.formatAgain.push(ofFormat.again);
      times[f]!.twinAgain.push(ofTwin.again);
    }
    console.log(`round ${warmUp ? 'warm-up' : round} done; ${await loadLine()}`);
  }

  const range = (ratios: number[]) => `${ratio(Math.min(...ratios))}–${ratio(Math.max(...ratios))}`;
  const perRound = (over: number[], under: number[]) => over.map((x, i) => x / under[i]!);
  // Net of start-up from the medians: one round's start-up varies by a second or more on a busy machine.
  const startUpMedian = median(startUp);
  const net = (over: number[], under: number[]) =>
    (median(over) - startUpMedian) / (median(under) - startUpMedian);
  const rows: string[][] = [];
  for (const [f, format] of formats.entries()) {
    const { format: first, twin, formatAgain, twinAgain } = times[f]!;
    const ratios = perRound(first, twin);
    rows.push([
      format.label,
      seconds(median(first)),
      seconds(median(twin)),
      `${ratio(median(ratios))} (${range(ratios)})`,
      ratio(net(first, twin)),
      `${seconds(median(formatAgain))} / ${seconds(median(twinAgain))}: ${ratio(median(perRound(formatAgain, twinAgain)))}`,
      ratio(net(formatAgain, twinAgain)),
      median(ratios) <= 2 ? 'yes' : 'NO',
      net(first, twin) <= 2 ? 'yes' : 'NO',
    ]);
  }
  console.log();
  printTable(
    [
      'first import, medians',
      'the file',
      'its twin (CSV)',
      'ratio: median (rounds)',
      'net of start-up',
      're-import: file / twin',
      'net',
      '≤ 2×',
      'net ≤ 2×',
    ],
    rows,
  );
  console.log(`start-up of gwapi import (a one-row CSV): median ${seconds(median(startUp))}`);
  for (const [label, report] of reports) console.log(`  ${label}: ${report}`);
  console.log(`${await loadLine()} at the end`);
} finally {
  await admin.end({ timeout: 5 });
  await postgres.stop();
  await rm(folder, { recursive: true, force: true });
}
