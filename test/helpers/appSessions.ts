/** The database sessions of a test's app, and a streamed response cut off by ending its session. */
import type { Test } from 'tap';
import { openStream } from '../../testkit/openStream.js';
import type { TestApi } from './api.js';

/** States of the app's own database connections (its pool has an application_name of its own). */
export async function appBackends(api: TestApi): Promise<{ pid: number; state: string }[]> {
  return api.db.sql<{ pid: number; state: string }[]>`
    select pid, state from pg_stat_activity where application_name = ${api.applicationName}`;
}

export const inTransaction = (backends: { state: string }[]) =>
  backends.some((b) => b.state === 'idle in transaction' || b.state === 'active');

/**
 * A response whose database session is ended once `bytes` of its body have arrived (the app's pool
 * has one connection: the one streaming); returns what the client got (as text, and its bytes), which
 * must be incomplete. The client pauses meanwhile, so the body is not over before the session is.
 */
export async function cutOffAfter(
  t: Test,
  api: TestApi,
  path: string,
  key: string,
  { bytes, headers = {} }: { bytes: number; headers?: Record<string, string> },
): Promise<{ body: string; bytes: Buffer }> {
  const stream = openStream(api.base, path, key, headers);
  await stream.arrived(bytes);
  stream.pause();
  const backends = await appBackends(api);
  t.ok(inTransaction(backends), 'streaming from an open transaction');
  await api.db.sql`select pg_terminate_backend(${backends[0]!.pid})`;
  stream.resume();
  const { complete, body, bytes: received } = await stream.done;
  t.notOk(complete, 'the client sees an incomplete response');
  return { body, bytes: received };
}

/** cutOffAfter the first chunk of the body. */
export const cutOffAfterFirstChunk = (
  t: Test,
  api: TestApi,
  path: string,
  key: string,
  headers: Record<string, string> = {},
) => cutOffAfter(t, api, path, key, { bytes: 1, headers });
