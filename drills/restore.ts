/**
 * Restore drill (testkit/drills/restoreDrill.ts) with its report: a PostgreSQL 15 primary (Debian's
 * binaries) archiving to a pgBackRest repository set up from deploy/pgbackrest/, a full backup, imports
 * and the drills' steady load on a `gwapi serve`, then a point-in-time restore into a fresh data
 * directory and a new `gwapi serve` against it. Exit code 0 on PASS, 1 on FAIL, 2 when something it
 * needs is not installed.
 *
 *   npm run restore-drill [-- SETTLE_SECONDS [PROBE_TUBES]]   (defaults 20 and 21)
 */
import { exitWithUsage, numberArguments } from '../testkit/arguments.js';
import { backupRepository } from '../testkit/backups.js';
import { addDrillFixture } from '../testkit/drills/drillFixture.js';
import { addRestoreFixture, type RestoreReport, runRestoreDrill } from '../testkit/drills/restoreDrill.js';
import { pgbackrest, postgres15, requirePrerequisites } from '../testkit/prerequisites.js';
import { startReplicationCluster } from '../testkit/replication.js';
import { machineLine, ms, printTable } from '../testkit/report.js';
import { describeRestore } from './lib/restoreReport.js';
import { exitWithVerdict } from './lib/verdict.js';

requirePrerequisites([postgres15, pgbackrest]);

const [settleSeconds, probes] = numberArguments(20, 21);
if (!(settleSeconds > 0 && Number.isInteger(probes) && probes >= 1))
  exitWithUsage('restore.ts [SETTLE_SECONDS [PROBE_TUBES]], a positive number and a count');
const KEYS = 20;
const PERIOD_MS = 500;

const repository = await backupRepository();
const cluster = await startReplicationCluster({ standbys: 0, settings: repository.serverSettings });
let report: RestoreReport | undefined;
try {
  await repository.attach(cluster.primary);
  await repository.pgbackrest(['stanza-create']);
  await repository.pgbackrest(['check']);
  console.log(`Restore drill — ${await machineLine()}`);
  const fixture = await cluster.primary.query(async (sql) => ({
    ...(await addDrillFixture(sql, { keys: KEYS, holders: 0 })),
    ...(await addRestoreFixture(sql, probes)),
  }));
  const started = performance.now();
  await repository.pgbackrest(['--type=full', 'backup']);
  console.log(
    `PostgreSQL 15 primary :${cluster.primary.port} archiving to pgBackRest (deploy/pgbackrest/), full backup in ` +
      `${ms(performance.now() - started)}; load: ${KEYS} keys, each a request every ${PERIOD_MS} ms; an import ` +
      `into ${probes} probe tubes every 250 ms; a token and every probe series' validators kept every second; ` +
      `${settleSeconds} s before the target and after it\n`,
  );
  report = await runRestoreDrill({
    cluster,
    repository,
    fixture,
    folder: repository.folder,
    settleMs: settleSeconds * 1000,
    periodMs: PERIOD_MS,
    log: (line) => console.error(`  … ${line}`),
  });
  const { phases, lines, tokens, validators } = describeRestore(report);
  printTable(phases.header, phases.rows);
  console.log();
  for (const line of lines) console.log(line);
  console.log();
  printTable(tokens.header, tokens.rows);
  console.log();
  printTable(validators.header, validators.rows, [0, 1]);
} finally {
  await cluster.stop();
  await repository.remove();
}
exitWithVerdict(report!.problems);
