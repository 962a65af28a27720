/**
 * Lag and "held through" from the primary's WAL samples (src/db/readReplicas/walSamples.ts), on samples
 * written out: the figures the monitor derives for a replica at each replay position.
 */
import t from 'tap';
import { lsnOf, type WalSample, WalSamples } from '../../../src/db/readReplicas/walSamples.js';

/** One sample a second: `lsn` written by then, `xmin`/`xmax` of the primary's snapshot. */
const sample = (second: number, lsn: bigint, xmin: bigint, xmax: bigint): WalSample => ({
  at: second * 1000,
  lsn,
  primaryTime: 1_700_000_000_000 + second * 1000,
  xmin,
  xmax,
});

/** Samples of `spec`, one a second from second 0: [lsn, xmin, xmax] each. */
function samplesOf(keepMs: number, spec: [bigint, bigint, bigint][]): WalSamples {
  const samples = new WalSamples(keepMs);
  for (const [second, [lsn, xmin, xmax]] of spec.entries()) samples.add(sample(second, lsn, xmin, xmax));
  return samples;
}

t.test('an LSN as PostgreSQL prints it', async (t) => {
  t.equal(lsnOf('0/0'), 0n);
  t.equal(lsnOf('16/B374D848'), (0x16n << 32n) + 0xb374d848n);
});

t.test('lag: the age of the oldest write the replica has not replayed', async (t) => {
  const samples = samplesOf(60_000, [
    [100n, 10n, 10n],
    [100n, 10n, 10n],
    [250n, 11n, 12n],
    [400n, 12n, 12n],
  ]);
  t.equal(samples.lagMs(400n, 3500), 0, 'replayed the newest sample');
  t.equal(samples.lagMs(500n, 3500), 0, 'ahead of it (a write after the sample)');
  t.equal(samples.lagMs(250n, 3500), 500, 'lacks what was written by second 3');
  t.equal(samples.lagMs(100n, 3500), 1500, 'lacks what was written by second 2');
  t.equal(samples.lagMs(99n, 3500), 3500, 'lacks even the oldest sample');
  // The primary gone: no new samples, and a replica that had the last one stays current.
  t.equal(samples.lagMs(400n, 60_000), 0, 'judged against the last sample');
  t.equal(samples.lagMs(250n, 60_000), 57_000, 'one that lacked it falls further behind');
});

t.test('old samples are dropped, the newest kept', async (t) => {
  const samples = new WalSamples(2000);
  for (let second = 0; second <= 10; second++) samples.add(sample(second, BigInt(second * 100), 1n, 1n));
  t.equal(samples.lagMs(0n, 10_000), 2000, 'the oldest kept is from second 8');
  t.equal(samples.newest?.lsn, 1000n);
});

t.test('held through: the newest instant whose writers had all ended at a replayed sample', async (t) => {
  // Second 1: xid 20 runs (it may have stamped a change). Second 2: still running. Second 3: ended.
  const samples = samplesOf(60_000, [
    [100n, 20n, 20n],
    [200n, 20n, 21n],
    [300n, 20n, 21n],
    [400n, 21n, 21n],
  ]);
  const at = (second: number) => 1_700_000_000_000 + second * 1000;
  t.equal(samples.heldThroughMs(50n), undefined, 'before every sample: nothing known');
  t.equal(samples.heldThroughMs(100n), at(0), 'nothing ran at second 0');
  t.equal(samples.heldThroughMs(300n), at(0), 'xid 20 may hold changes from seconds 1 and 2');
  t.equal(samples.heldThroughMs(400n), at(3), 'xid 20 ended before second 3');
});

t.test('a new primary with less WAL than the old one: judged against its samples alone', async (t) => {
  const samples = samplesOf(60_000, [
    [500n, 30n, 30n],
    [600n, 30n, 30n],
  ]);
  samples.add(sample(5, 550n, 31n, 31n));
  t.equal(samples.lagMs(550n, 6000), 0, 'a standby that follows it has all it wrote');
  t.equal(samples.heldThroughMs(550n), 1_700_000_005_000);
});
