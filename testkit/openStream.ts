/** A GET whose body its reader takes at its own pace, pauses or leaves: how the fault tests and drills read. */
import { request } from 'node:http';

export interface OpenStream {
  /** Resolves with the first chunk of the body. */
  firstChunk: Promise<Buffer>;
  /** Resolves once at least `bytes` of the body have arrived (never, if the body is shorter). */
  arrived(bytes: number): Promise<void>;
  /** What arrived, and whether the response ended properly (false: cut off). */
  done: Promise<{ complete: boolean; body: string; bytes: Buffer }>;
  pause(): void;
  resume(): void;
  /** Leaves: closes the connection mid-response. */
  abort(): void;
}

/** A GET whose body the test reads at its own pace (raw bytes: a compressed body stays compressed). */
export function openStream(
  base: string,
  path: string,
  key: string,
  headers: Record<string, string> = {},
): OpenStream {
  let pause = () => {};
  let resume = () => {};
  let abort = () => {};
  let gotFirst: (chunk: Buffer) => void = () => {};
  const firstChunk = new Promise<Buffer>((resolve) => (gotFirst = resolve));
  let received = 0;
  const waiting: { bytes: number; resolve: () => void }[] = [];
  const done = new Promise<{ complete: boolean; body: string; bytes: Buffer }>((resolve, reject) => {
    const req = request(
      `${base}${path}`,
      { headers: { ...headers, 'x-api-key': key }, agent: false },
      (res) => {
        pause = () => res.pause();
        resume = () => res.resume();
        const chunks: Buffer[] = [];
        const finish = (complete: boolean) => {
          const bytes = Buffer.concat(chunks);
          resolve({ complete, body: bytes.toString(), bytes });
        };
        res.on('data', (chunk: Buffer) => {
          if (chunks.length === 0) gotFirst(chunk);
          chunks.push(chunk);
          received += chunk.length;
          for (const wait of waiting.filter((wait) => received >= wait.bytes)) {
            waiting.splice(waiting.indexOf(wait), 1);
            wait.resolve();
          }
        });
        res.on('end', () => finish(true));
        res.on('error', () => finish(false));
      },
    );
    abort = () => req.destroy();
    req.on('error', reject);
    req.end();
  });
  done.catch(() => {});
  const arrived = (bytes: number) =>
    received >= bytes ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ bytes, resolve }));
  return { firstChunk, arrived, done, pause: () => pause(), resume: () => resume(), abort: () => abort() };
}
