/**
 * What the primary had written, sampled once a tick: its WAL position, its clock, and its snapshot's
 * xmin/xmax. A replica's replay position, set against these, gives its lag without a write of our own
 * (a heartbeat table would need write access and would wake an idle primary's WAL), and the instant of
 * the primary's clock up to which it holds every change (heldThrough).
 */

export interface WalSample {
  /** performance.now() when the answer came: lag is measured on this process's clock. */
  at: number;
  /** pg_current_wal_lsn(): every transaction committed before the sample ends at or before it. */
  lsn: bigint;
  /** clock_timestamp() of the primary, ms since the epoch: what series_changed_at and the like are on. */
  primaryTime: number;
  /** The sample's snapshot: transactions from xmin on may still be running, from xmax on not yet begun. */
  xmin: bigint;
  xmax: bigint;
}

/** An LSN as PostgreSQL prints it (`16/B374D848`) as a number. */
export function lsnOf(text: string): bigint {
  const [high, low] = text.split('/') as [string, string];
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

export class WalSamples {
  private readonly samples: WalSample[] = [];

  /** Samples older than `keepMs` are dropped (the newest is always kept). */
  constructor(private readonly keepMs: number) {}

  add(sample: WalSample): void {
    // Less WAL than before: another primary (a standby promoted without all of the old one's WAL).
    // Replicas follow its WAL now, and would never replay the old one's last samples.
    if (sample.lsn < (this.newest?.lsn ?? 0n)) this.samples.length = 0;
    this.samples.push(sample);
    while (this.samples.length > 1 && sample.at - this.samples[0]!.at > this.keepMs) this.samples.shift();
  }

  get newest(): WalSample | undefined {
    return this.samples.at(-1);
  }

  /**
   * How long ago the primary wrote what a replica at `replayed` still lacks: the age of the oldest
   * sample past it; 0 when it has replayed the newest sample. With the primary gone (no new samples),
   * a replica is judged against the last one, so standbys that had it keep serving.
   */
  lagMs(replayed: bigint, now: number): number {
    const behind = this.samples.find((sample) => sample.lsn > replayed);
    return behind ? now - behind.at : 0;
  }

  /**
   * The instant of the primary's clock up to which a replica at `replayed` holds every committed change
   * (undefined: no such instant is known). A change stamped with clock_timestamp() before sample s1
   * belongs to a transaction that had an xid at s1, so below s1's xmax; once a later sample s2 sees
   * every such transaction ended (its xmin ≥ s1's xmax), their commits lie before s2's position. A
   * replica that replayed s2 holds them all: heldThrough is the newest such s1's time.
   */
  heldThroughMs(replayed: bigint): number | undefined {
    let replayedIndex = -1;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      if (this.samples[i]!.lsn <= replayed) {
        replayedIndex = i;
        break;
      }
    }
    if (replayedIndex === -1) return undefined;
    const ended = this.samples[replayedIndex]!.xmin;
    for (let i = replayedIndex; i >= 0; i--) {
      if (this.samples[i]!.xmax <= ended) return this.samples[i]!.primaryTime;
    }
    return undefined;
  }
}
