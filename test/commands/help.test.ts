/** `gwapi --help` and the help of every command: exit 0, every option, argument and setting named. */
import t from 'tap';
import { variables } from '../../src/config.js';
import { GWAPI_CLI } from '../../testkit/gwapi.js';
import { warningCaptureOptions } from '../../testkit/outputCapture.js';
import { runCli, spawnCli } from '../helpers/cli.js';

/** Every command, with the options and arguments its help must name (besides --help). */
const COMMANDS: Record<string, string[]> = {
  '': ['migrate', 'import', 'measurements', 'keys', 'serve', 'demo'],
  migrate: [],
  import: ['registry', 'measurements', 'bro-gmw', 'bro-gld', 'dino', 'fews'],
  'import registry': ['<file>'],
  'import measurements': ['<file>'],
  'import bro-gmw': ['<files...>'],
  'import bro-gld': ['<files...>', '--tube <id>'],
  'import dino': ['<files...>', '--timezone <tz>', '--status <status>'],
  'import fews': ['<files...>', '--parameter <id...>', '--datum <datum>'],
  measurements: ['status', 'remove'],
  'measurements status': ['<status>', '--tube <uuid...>', '--all-tubes', '--from <time>', '--to <time>'],
  'measurements remove': ['--tube <uuid>', '--from <time>', '--to <time>', '--yes'],
  keys: ['create', 'grant', 'revoke', 'list'],
  'keys create': ['--name <name>', '--tube <uuid>', '--all-tubes'],
  'keys grant': ['<keyId>', '--tube <uuid...>'],
  'keys revoke': ['<keyId>'],
  'keys list': [],
  serve: [],
  demo: [],
};

/** The subcommand names a help text lists under "Commands:" (without commander's own `help`). */
function listedCommands(help: string): string[] {
  const section = help.split('\nCommands:\n')[1]?.split('\n\n')[0] ?? '';
  return section
    .split('\n')
    .map((line) => /^ {2}(\S+)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined && name !== 'help');
}

t.test('runCli runs the TypeScript sources through tsx', async (t) => {
  const child = spawnCli(['--help']);
  t.equal(child.spawnfile, process.execPath);
  // In `npm test`, the harness's warning capture goes first (testkit/outputCapture.ts).
  t.same(child.spawnargs.slice(1), [...warningCaptureOptions(), '--import', 'tsx', GWAPI_CLI, '--help']);
  t.match(GWAPI_CLI, /\/src\/cli\.ts$/);
  child.stdout.resume();
  t.equal(await new Promise((resolve) => child.on('close', resolve)), 0);
});

t.test('every command has a help that names its options, arguments and every setting', async (t) => {
  const helps = await Promise.all(
    Object.keys(COMMANDS).map(async (command) => {
      const args = command === '' ? [] : command.split(' ');
      return [command, await runCli([...args, '--help'])] as const;
    }),
  );
  for (const [command, result] of helps) {
    t.test(`gwapi ${command} --help`.replace('  ', ' '), async (t) => {
      t.equal(result.code, 0, result.stderr);
      t.equal(result.stderr, '');
      t.match(result.stdout, `Usage: gwapi ${command}`.trimEnd());
      t.match(result.stdout, '--help');
      for (const expected of COMMANDS[command]!) t.match(result.stdout, expected);
      for (const setting of Object.keys(variables))
        t.match(result.stdout, new RegExp(`^ {2}${setting} `, 'm'));
      const children = COMMANDS[command]!.filter((word) => !word.startsWith('<') && !word.startsWith('-'));
      t.same(
        listedCommands(result.stdout),
        children,
        'the commands it lists are exactly the ones tested here',
      );
    });
  }
});

t.test('a command that does not exist is refused', async (t) => {
  const result = await runCli(['nonsense']);
  t.not(result.code, 0);
  t.match(result.stderr, "unknown command 'nonsense'");
  t.equal(result.stdout, '');
});

t.test('usage errors are one line on stderr and a non-zero exit', async (t) => {
  const cases: [string[], string][] = [
    [['import', 'registry'], "gwapi: missing required argument 'file'\n"],
    [['keys', 'create'], "gwapi: required option '--name <name>' not specified\n"],
    [['bogus'], "gwapi: unknown command 'bogus'\n"],
    [['keys', 'list', '--verbose'], "gwapi: unknown option '--verbose'\n"],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(args);
    t.not(result.code, 0, args.join(' '));
    t.equal(result.stdout, '', args.join(' '));
    t.equal(result.stderr, message, args.join(' '));
  }
});
