/**
 * The live memory of a Node process started with `inspectFlag(port)`: what is still reachable after a
 * full garbage collection, read over the inspector's DevTools protocol. Resident memory also moves with
 * what the allocator keeps and what the collector has not visited yet; live memory moves with a leak.
 */

/** The option (for NODE_OPTIONS) that opens the inspector on loopback `port`. */
export const inspectFlag = (port: number) => `--inspect=127.0.0.1:${port}`;

interface Reply {
  id: number;
  result?: { result?: { value?: unknown } };
  error?: { message: string };
}

/** The V8 heap in use plus the memory of Buffers and ArrayBuffers, in MB, after a full collection. */
export async function liveMemoryMb(port: number): Promise<number> {
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
  const call = (method: string, params: object = {}) =>
    new Promise<Reply['result']>((resolve, reject) => {
      const id = ++lastId;
      waiting.set(id, (reply) =>
        reply.error ? reject(new Error(`${method}: ${reply.error.message}`)) : resolve(reply.result),
      );
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    // A second collection frees what the first one only finalised (Buffers' backing stores).
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const reading = await call('Runtime.evaluate', {
      expression: '(({ heapUsed, external }) => heapUsed + external)(process.memoryUsage())',
      returnByValue: true,
    });
    return Number(reading?.result?.value) / 2 ** 20;
  } finally {
    socket.close();
  }
}
