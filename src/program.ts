/**
 * `gwapi`, the operator's command line, once cli.ts has set the heap. This file only parses arguments
 * and maps outcomes to exit codes; each command lives in `commands/`.
 */
import { Argument, Command, InvalidArgumentError, Option } from 'commander';
import { databaseTarget } from './commands/database.js';
import { describeSettings, loadSettings, type Settings, SettingsError } from './config.js';
import { explainedError } from './connectionFailure.js';
import { isWriteOnClosedConnection } from './db/errorCodes.js';
import { MIGRATION_LOCK_TIMEOUT_MS } from './db/migrate.js';
import { DEFAULT_STATUS, STATUSES, statusCode } from './domain/status.js';
import { UserError } from './errors.js';
import { namedTube } from './importers/formats/identity.js';
import type { FormatCommand } from './importers/formats/index.js';
import type { FormatOptions } from './importers/formats/reader.js';

/** One line on standard error and exit 1; the whole error too with LOG_LEVEL=debug when it is no UserError. */
function fail(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`gwapi: ${error instanceof UserError ? '' : 'unexpected error: '}${message}\n`);
  if (!(error instanceof UserError) && process.env.LOG_LEVEL === 'debug') console.error(error);
  process.exit(1);
}

/**
 * Wraps a command: settings first (a bad one is one line and exit 2), then one-line errors, exit 1. A
 * connection to the database lost in the middle is told as such, also when postgres.js throws it from
 * a timer of its own (isWriteOnClosedConnection), where no caller can catch it.
 */
function run<A extends unknown[]>(command: (settings: Settings, ...args: A) => Promise<void>) {
  return async (...args: A) => {
    let settings: Settings | undefined;
    const explained = (error: unknown) =>
      settings ? explainedError(error, databaseTarget(settings)) : error;
    process.on('uncaughtException', (error) => {
      if (!isWriteOnClosedConnection(error)) {
        // As Node itself answers an uncaught exception.
        console.error(error);
        process.exit(1);
      }
      fail(explained(error));
    });
    try {
      settings = loadSettings();
      await command(settings, ...args);
    } catch (error) {
      if (error instanceof SettingsError) {
        process.stderr.write(`gwapi: ${error.message}\n`);
        process.exit(2);
      }
      fail(explained(error));
    }
  };
}

/**
 * A command whose module is loaded when it runs, so that `gwapi keys` or `migrate` loads neither the
 * importers nor the HTTP server.
 */
function later<M, A extends unknown[]>(
  load: () => Promise<M>,
  command: (module: M) => (settings: Settings, ...args: A) => Promise<void>,
) {
  return run(async (settings: Settings, ...args: A) => command(await load())(settings, ...args));
}

const importCommands = () => import('./commands/import.js');
const correctionCommands = () => import('./commands/measurements.js');
const keyCommands = () => import('./commands/keys.js');

const collect = (value: string, previous: string[]) => [...previous, value];

function parseTube(value: string): string {
  const identifier = namedTube(value);
  if (identifier === undefined) {
    throw new InvalidArgumentError(
      "not a tube: give its UUID or BRO's well and tube number, such as GMW000000036287:1",
    );
  }
  return identifier;
}

function parseTimezone(value: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
  } catch {
    throw new InvalidArgumentError('not an IANA time zone (such as Europe/Amsterdam or UTC)');
  }
  return value;
}

const program = new Command('gwapi')
  .description('Groundwater read API: serve it, load and correct its data, and manage its API keys.')
  // One line on bad usage, like every other error of gwapi (`--help` is there for the rest).
  .configureOutput({ outputError: (text, write) => write(`gwapi: ${text.replace(/^error: /, '')}`) })
  .addHelpText('after', `\n${describeSettings()}`);

program
  .command('migrate')
  .description(
    'Bring the database schema up to date. Safe to run again and from several replicas at once; ' +
      'uses a TimescaleDB hypertable when the extension is available, plain PostgreSQL otherwise. ' +
      `Each statement waits at most lock_timeout (${MIGRATION_LOCK_TIMEOUT_MS / 1000} s) for a lock and is retried; run it against ` +
      'PostgreSQL itself, not through PgBouncer in transaction mode. Where TimescaleDB is installed but not ' +
      'in shared_preload_libraries it refuses, and says how to preload it. An upgraded database is then ' +
      'served by this release and the one before; once no replica of the one before serves, run it once ' +
      'with --finish (docs/operations/upgrade.md).',
  )
  .option(
    '--without-timescaledb',
    'keep measurements a plain PostgreSQL table for good, even where TimescaleDB is installed',
    false,
  )
  .option(
    '--finish',
    'only when no replica of the release before serves any more: also take the steps that release cannot ' +
      'read, online (levels stored as thousandths, chunk by chunk, progress per chunk); safe to stop and ' +
      'run again',
    false,
  )
  .action(
    later(
      () => import('./commands/migrate.js'),
      (m) => m.migrateCommand,
    ),
  );

const importer = program
  .command('import')
  .description(
    'Load the tube registry or measurements into the database, as JSON and CSV or as the files the field ' +
      'exchanges (BRO GMW and GLD, DINO, FEWS PI-XML).',
  );
importer
  .command('registry')
  .description(
    'Upsert wells and tubes from a JSON file: [{ "name": string, "tubes": [{ "identifier": uuid, ' +
      '"number": string, "unit"?: string (default m), "verticalDatum"?: string (default NAP) }] }]. ' +
      'A bad file is reported and nothing of it is imported.',
  )
  .argument('<file>', 'the registry JSON file')
  .action(later(importCommands, (m) => m.importRegistryCommand));
importer
  .command('measurements')
  .description(
    'Upsert measurements from CSV with the header tubeIdentifier,observedAt,value (observedAt in RFC 3339 ' +
      `with offset), or tubeIdentifier,observedAt,value,status (status: ${STATUSES.join(', ')}). A row for an ` +
      'existing (tube, observedAt) replaces its value, and its status when the file has the column; without ' +
      `it new measurements are ${DEFAULT_STATUS} and stored ones keep theirs. Bad rows are reported as ` +
      'FILE:LINE: field: reason and nothing of the file is imported.',
  )
  .argument('<file>', 'the CSV file, or - for standard input')
  .action(later(importCommands, (m) => m.importMeasurementsCommand));

const FORMAT_HELP =
  'Each file is imported in its own transaction, in order: a refused file is reported as FILE:LINE: ' +
  'field: reason, nothing of it is written, and the next files still import (the exit status is then ' +
  '1). Each file reports the points it read, wrote by status, left unchanged and skipped, by reason.';

/** The options every format reader takes, from what commander parsed (only some are given per command). */
function formatOptions(parsed: {
  tube?: string;
  timezone?: string;
  status?: (typeof STATUSES)[number];
  parameter?: string[];
  datum?: string;
}): FormatOptions {
  return {
    tube: parsed.tube,
    timezone: parsed.timezone ?? 'Europe/Amsterdam',
    status: statusCode(parsed.status ?? DEFAULT_STATUS),
    parameters: parsed.parameter,
    datum: parsed.datum ?? 'NAP',
  };
}

function formatCommand(command: FormatCommand, description: string) {
  return importer
    .command(command)
    .description(`${description} ${FORMAT_HELP}`)
    .argument('<files...>', 'the files, or - for standard input');
}

const importFormat = (command: FormatCommand) =>
  later(
    importCommands,
    (m) => (settings, files: string[], parsed: Parameters<typeof formatOptions>[0]) =>
      m.importFormatCommand(settings, command, files, formatOptions(parsed)),
  );

formatCommand(
  'bro-gmw',
  'Upsert wells and tubes from BRO GMW XML (a dispatch document, also in a SOAP envelope, or a registration ' +
    'request). A tube is identified by the UUID v5 of urn:bro:gmw:{well}:{tubeNumber}.',
).action(importFormat('bro-gmw'));
formatCommand(
  'bro-gld',
  "Upsert groundwater levels from BRO GLD XML (a dispatch or a registration) or BRO's CSV exports of a " +
    'GLD, into tubes already registered (gwapi import bro-gmw).',
)
  .option(
    '--tube <id>',
    "the tube of a file that names none, or the one it must name: its UUID, or BRO's well and tube " +
      'number (GMW000000036287:1)',
    parseTube,
  )
  .action(importFormat('bro-gld'));
formatCommand(
  'dino',
  'Upsert wells, tubes and groundwater levels from DINO CSV files (Grondwaterstanden_Put).',
)
  .option(
    '--timezone <tz>',
    'the IANA time zone whose midnight the dates are',
    parseTimezone,
    'Europe/Amsterdam',
  )
  .addOption(
    new Option('--status <status>', 'the status of the levels').choices(STATUSES).default(DEFAULT_STATUS),
  )
  .action(importFormat('dino'));
formatCommand('fews', 'Upsert wells, tubes and groundwater levels from Delft-FEWS PI-XML time series.')
  .option(
    '--parameter <id...>',
    'import only the series of these parameterIds (default: every one in metres)',
  )
  .option('--datum <datum>', 'the vertical datum of series in plain m', 'NAP')
  .action(importFormat('fews'));

const corrections = program
  .command('measurements')
  .description('Correct stored measurements: set their status, or remove them.');
const intervalOptions = (command: Command) =>
  command
    .requiredOption('--from <time>', 'start of the interval, included (RFC 3339 with offset)')
    .requiredOption(
      '--to <time>',
      'end of the interval, excluded (RFC 3339 with offset; no bound on the length)',
    );
intervalOptions(
  corrections
    .command('status')
    .description(
      'Set the status of the measurements of the tubes over [--from, --to), in one transaction. Prints how ' +
        'many changed; measurements that already have the status are left as they are.',
    )
    .addArgument(new Argument('<status>', 'the status to set').choices(STATUSES))
    .option('--tube <uuid...>', 'the tubes whose measurements to set (one or more; repeatable)')
    .option('--all-tubes', 'every tube', false),
).action(later(correctionCommands, (m) => m.setStatusCommand));
intervalOptions(
  corrections
    .command('remove')
    .description(
      "Remove one tube's measurements over [--from, --to), in one transaction (to undo an import into the " +
        'wrong tube). Asks for confirmation on a terminal; without one it refuses unless given --yes. Prints ' +
        'how many were removed.',
    )
    .requiredOption('--tube <uuid>', 'the tube whose measurements to remove')
    .option('--yes', 'remove without asking', false),
).action(later(correctionCommands, (m) => m.removeCommand));

const keys = program
  .command('keys')
  .description('Create, grant, revoke and list API keys (only hashes are stored).');
keys
  .command('create')
  .description(
    'Create a key. Prints the key alone on the first line (shown only now) and its key id on the second.',
  )
  .requiredOption('--name <name>', 'who or what the key is for')
  .option('--tube <uuid>', 'grant access to this tube (repeatable)', collect, [])
  .option('--all-tubes', 'grant access to every tube, including tubes registered later', false)
  .action(later(keyCommands, (m) => m.createKeyCommand));
keys
  .command('grant')
  .description('Grant a key access to more tubes.')
  .argument('<keyId>', 'the key id printed by `keys create` or `keys list`')
  .addOption(new Option('--tube <uuid...>', 'tube identifiers to grant (repeatable)').makeOptionMandatory())
  .action(later(keyCommands, (m) => m.grantKeyCommand));
keys
  .command('revoke')
  .description('Revoke a key: it is refused with 401 on every replica within 10 seconds.')
  .argument('<keyId>', 'the key id')
  .action(later(keyCommands, (m) => m.revokeKeyCommand));
keys
  .command('list')
  .description('List keys: id, name, created and revoked times, grant count. Never shows a key.')
  .option(
    '--json',
    'one JSON object per line: id, name, created and revoked times, all tubes or the tubes granted',
    false,
  )
  .action(later(keyCommands, (m) => m.listKeysCommand));

program
  .command('serve')
  .description(
    'Run the HTTP service. Without DATABASE_URL it uses an embedded PostgreSQL in GWAPI_DATA_DIR (and migrates ' +
      'it); without REDIS_URL it limits in process (correct for one replica only).',
  )
  .action(
    later(
      () => import('./commands/serve.js'),
      (m) => m.serveCommand,
    ),
  );

program
  .command('demo')
  .description(
    'Run the service with no set-up at all: embedded PostgreSQL, demo wells with a year of 15-minute ' +
      'measurements, and a printed demo key with example requests.',
  )
  .action(
    later(
      () => import('./commands/demo.js'),
      (m) => m.demoCommand,
    ),
  );

for (const command of program.commands.flatMap((c) => [c, ...c.commands])) {
  command.addHelpText('after', `\n${describeSettings()}`);
  // Subcommands do not inherit output settings they were created before.
  command.configureOutput(program.configureOutput());
}

await program.parseAsync();
