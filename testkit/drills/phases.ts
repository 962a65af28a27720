import type { ReplicaOptions } from '../gwapi.js';
import type { Owner } from '../processes.js';

/** What every drill run is given: where its files go, its load's pace, and who sees what. */
export interface DrillRunOptions {
  /** For HAProxy's configuration and admin socket. */
  folder: string;
  /** How long the load runs before the drill's step and after it. */
  settleMs: number;
  /** Each load key asks again after this long. */
  periodMs: number;
  owner?: Owner;
  /** Sees each replica's process as it is spawned (the test suite scans their output for keys). */
  watch?: ReplicaOptions['watch'];
  /** Progress lines. */
  log?: (line: string) => void;
}

/** A drill's timeline: named phases run one after the other, each with its start, end and findings. */
export interface PhaseWindow {
  phase: string;
  from: number;
  to: number;
}

/**
 * Runs phases back to back: each begins where the last ended, so that every request of the load falls
 * in exactly one. `work` may return what it found, kept with the phase's window.
 */
export function phaseClock<Found extends object>(log: (line: string) => void) {
  const windows: (PhaseWindow & Partial<Found>)[] = [];
  let mark = performance.now();
  return {
    windows,
    async phase(name: string, work: () => Promise<Found | undefined>): Promise<void> {
      const found = await work();
      const now = performance.now();
      windows.push({ phase: name, from: mark, to: now, ...found } as PhaseWindow & Partial<Found>);
      log(`${name}: ${Math.round(now - mark)} ms`);
      mark = now;
    },
  };
}
