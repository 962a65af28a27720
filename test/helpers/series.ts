/** One tube's series as a document in process, without HTTP: what the series endpoint streams. */
import type { Readable } from 'node:stream';
import type { Sql } from '../../src/db/connect.js';
import { type DocumentRequest, openDocument, seriesDocument } from '../../src/engine/document.js';
import type { Interval } from '../../src/engine/read/selects.js';
import { findTube } from '../../src/engine/read/tubes.js';
import type { SeriesWriter } from '../../src/engine/write/writer.js';
import { type Client, mayRead } from '../../src/keys/clients.js';

export interface SeriesRequest extends Interval, Omit<DocumentRequest<never>, 'plan'> {
  client: Client;
  tubeIdentifier: string;
}

/** The series' body, or undefined when the tube does not exist or the client may not read it. */
export async function openSeries(
  sql: Sql,
  { client, tubeIdentifier, from, to, aggregate, ...request }: SeriesRequest,
  writer: SeriesWriter,
): Promise<Readable | undefined> {
  const opened = await openDocument(
    sql,
    {
      ...request,
      async plan(pool, tx) {
        const tube = await findTube(tx, tubeIdentifier);
        if (!tube || !mayRead(client, tube.id)) return undefined;
        return { document: await seriesDocument(pool, tx, tube, tubeIdentifier, { from, to, aggregate }) };
      },
    },
    writer,
  );
  return opened?.body;
}
