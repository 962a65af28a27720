/**
 * A benchmark server (benchServer.ts) in a child process, and what the parent measures of it through
 * /proc (testkit/processes.ts): CPU time, and resident memory with its peak.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_OPTIONS } from '../../src/heap.js';
import { peakMb, processCpuMs, resetPeakMb, residentMb, stopProcess } from '../../testkit/processes.js';
import type { FloorRequest } from './floor.js';
import { timedGet } from './http.js';
import type { ParentMessage, ServerMessage } from './serverProtocol.js';

export { SERVER_APPLICATION_NAME } from './serverProtocol.js';

const ENTRY = fileURLToPath(new URL('./benchServer.ts', import.meta.url));

export interface ServerProcess {
  base: string;
  pid: number;
  /** CPU time the process has used so far, all threads (user + system), ms; 10 ms resolution. */
  cpuMs(): number;
  /** Current resident set, MB. */
  residentMb(): number;
  /** Starts a new peak measurement. */
  resetPeak(): void;
  /** Highest resident set since resetPeak(), MB. */
  peakMb(): number;
  /** Runs the floor read in the server process; its duration (ms) as the server measured it. */
  floor(request: FloorRequest): Promise<{ ms: number; rows: number }>;
  /** Starts V8's CPU profiler in the server process (`api` only). */
  startProfile(): Promise<void>;
  /** Stops it and writes the profile (a .cpuprofile) to `file`. */
  stopProfile(file: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startServerProcess(
  kind: 'api' | 'bare',
  databaseUrl = '',
  options: {
    /**
     * Node options of the server process: gwapi's heap options (src/heap.ts) unless given; benchServer.ts
     * is not started through cli.ts, which would add them.
     */
    nodeArgs?: string[];
  } = {},
): Promise<ServerProcess> {
  const child: ChildProcess = fork(ENTRY, [kind, databaseUrl], {
    execArgv: ['--import', 'tsx', ...(options.nodeArgs ?? SERVICE_NODE_OPTIONS)],
    // Log lines go where a production server's would go if nobody read them.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const messages: ((message: ServerMessage) => void)[] = [];
  child.on('message', (message: ServerMessage) => messages.shift()?.(message));
  // Each request below waits for one message; the exit listener of each would pile up.
  child.setMaxListeners(0);
  const next = () =>
    new Promise<ServerMessage>((resolve, reject) => {
      messages.push(resolve);
      child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    });
  const listening = await next();
  if (listening.type !== 'listening') throw new Error(`bench server failed: ${JSON.stringify(listening)}`);
  const pid = child.pid!;
  /** One message to the server and its one answer. */
  const ask = (message: ParentMessage) => {
    const answer = next();
    child.send(message);
    return answer;
  };
  return {
    base: listening.base,
    pid,
    cpuMs: () => processCpuMs(pid),
    residentMb: () => residentMb(pid),
    resetPeak: () => resetPeakMb(pid),
    peakMb: () => peakMb(pid),
    async floor(request) {
      const message = await ask({ type: 'floor', request });
      if (message.type !== 'floor') throw new Error(`floor failed: ${JSON.stringify(message)}`);
      return message;
    },
    async startProfile() {
      const message = await ask({ type: 'startProfile' });
      if (message.type !== 'profiling') throw new Error(`profiler failed: ${JSON.stringify(message)}`);
    },
    async stopProfile(file) {
      const message = await ask({ type: 'stopProfile', file });
      if (message.type !== 'profiled') throw new Error(`profiler failed: ${JSON.stringify(message)}`);
    },
    stop: () => stopProcess(child),
  };
}

/**
 * The resident growth one request causes in a fresh server, MB: peak (the kernel's VmHWM) minus idle,
 * after three requests of the warm-up URL. `url(base, true)`: the warm-up (a day, say); `url(base,
 * false)`: the request measured.
 */
export async function freshServerGrowthMb(
  databaseUrl: string,
  url: (base: string, warmUp: boolean) => string,
  headers: Record<string, string>,
): Promise<number> {
  const server = await startServerProcess('api', databaseUrl);
  try {
    for (let warm = 0; warm < 3; warm++) await timedGet(url(server.base, true), headers);
    const idle = server.residentMb();
    server.resetPeak();
    const response = await timedGet(url(server.base, false), headers);
    if (response.status !== 200) throw new Error(`memory run ${url(server.base, false)}: ${response.status}`);
    return server.peakMb() - idle;
  } finally {
    await server.stop();
  }
}
