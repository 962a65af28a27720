/**
 * Bulk documents take turns on the event loop: before each chunk, a bulk document waits for its turn,
 * and one turn is given per pass of the loop (a setImmediate), to the documents in the order they asked.
 * Everything else that became ready meanwhile (a short request's query result, its socket, a key
 * lookup) runs in that pass too, so it never waits behind more than one bulk chunk, however many bulk
 * streams run. While another request is being answered, a turn is given only every `paceMs`: the bulk
 * streams then leave the cores (theirs and their database sessions') to it. With nothing else to do,
 * a pass is short and the bulk documents go at full speed
 * (docs/decisions/0111-bulk-documents-share-of-the-pool.md).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { whenResponseClosed } from './responseClosed.js';

/** Between two turns while another request is being answered. */
export const BULK_PACE_MS = 10;

export class BulkTurns {
  private readonly waiting: (() => void)[] = [];
  private passing = false;
  /** Requests being answered, from their arrival to the end of their response; and the bulk ones. */
  private answering = 0;
  private answeringBulk = 0;

  constructor(private readonly paceMs = BULK_PACE_MS) {}

  /** Counts every request of `app` while it is answered (a root hook). */
  countRequests(app: FastifyInstance): void {
    app.addHook('onRequest', (_request, reply, done) => {
      this.answering += 1;
      whenResponseClosed(reply.raw, () => (this.answering -= 1));
      done();
    });
  }

  /** `reply` answers with a bulk document: until it ends, it is not another request to make room for. */
  bulkResponse(reply: FastifyReply): void {
    this.answeringBulk += 1;
    whenResponseClosed(reply.raw, () => (this.answeringBulk -= 1));
  }

  /** Resolves on this document's turn. */
  turn = (): Promise<void> =>
    new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.passing) {
        this.passing = true;
        this.next();
      }
    });

  private next(): void {
    if (this.answering > this.answeringBulk) setTimeout(this.pass, this.paceMs);
    else setImmediate(this.pass);
  }

  private readonly pass = (): void => {
    this.waiting.shift()?.();
    if (this.waiting.length > 0) this.next();
    else this.passing = false;
  };
}
