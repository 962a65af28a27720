/**
 * A Node process started with `inspectFlag(port)`, read over the inspector's DevTools protocol: an
 * expression's value, and its live memory, what is still reachable after a full garbage collection.
 * Resident memory also moves with what the allocator keeps and what the collector has not visited yet;
 * live memory moves with a leak.
 */

/** The option (for NODE_OPTIONS) that opens the inspector on loopback `port`. */
export const inspectFlag = (port: number) => `--inspect=127.0.0.1:${port}`;

interface Reply {
  id: number;
  result?: { result?: { value?: unknown } };
  error?: { message: string };
}

type Call = (method: string, params?: object) => Promise<Reply['result']>;

/** One DevTools session with the process whose inspector listens on `port`, for `use`. */
async function inSession<T>(port: number, use: (call: Call) => Promise<T>): Promise<T> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error(`no inspector session on port ${port}`));
  });
  const waiting = new Map<number, (reply: Reply) => void>();
  socket.onmessage = (event) => {
    const reply = JSON.parse(String(event.data)) as Reply;
    waiting.get(reply.id)?.(reply);
  };
  let lastId = 0;
  const call: Call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++lastId;
      waiting.set(id, (reply) =>
        reply.error ? reject(new Error(`${method}: ${reply.error.message}`)) : resolve(reply.result),
      );
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    return await use(call);
  } finally {
    socket.close();
  }
}

const evaluated = async (call: Call, expression: string) =>
  (await call('Runtime.evaluate', { expression, returnByValue: true }))?.result?.value;

/** The value of `expression` (JSON-like) evaluated in the process's main context. */
export const evaluate = (port: number, expression: string): Promise<unknown> =>
  inSession(port, (call) => evaluated(call, expression));

/** The V8 heap in use plus the memory of Buffers and ArrayBuffers, in MB, after a full collection. */
export const liveMemoryMb = (port: number): Promise<number> =>
  inSession(port, async (call) => {
    // A second collection frees what the first one only finalised (Buffers' backing stores).
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const bytes = await evaluated(
      call,
      '(({ heapUsed, external }) => heapUsed + external)(process.memoryUsage())',
    );
    return Number(bytes) / 2 ** 20;
  });
