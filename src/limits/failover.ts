/**
 * Shared limits while Redis answers, this process's own limits while it does not. A Redis failure
 * never reaches the request path: the call is answered from memory instead. Shared limiting resumes
 * by itself: when the connection comes back, and (for a Redis that timed out without disconnecting)
 * when a call, at most one per probe interval, finds Redis answering again. Each switch is logged once.
 */
import type { Clock } from './memoryStore.js';
import type { AdmitOutcome, FailedAuthOutcome, LimitStore } from './store.js';

/** The part of a pino/Fastify logger the limits use. */
export interface LimitsLogger {
  info(message: string): void;
  warn(message: string): void;
}

export interface FailoverOptions {
  logger: LimitsLogger;
  clock: Clock;
  /** How often (ms) a local replica tries Redis again. */
  probeIntervalMs: number;
  /** Start in local mode (Redis did not answer at start). */
  startLocal?: Error;
}

export class FailoverStore implements LimitStore {
  private shared = true;
  /** Counts switches: a failure of a call begun before the last switch says nothing about Redis now. */
  private epoch = 0;
  private nextProbeAt = 0;

  constructor(
    private readonly redis: LimitStore,
    private readonly local: LimitStore,
    private readonly options: FailoverOptions,
  ) {
    if (options.startLocal) this.toLocal(options.startLocal, this.epoch);
  }

  /** True while limits are shared through Redis. */
  get isShared(): boolean {
    return this.shared;
  }

  /** The Redis connection is (again) established and answered its ready check. */
  redisReady(): void {
    this.toShared();
  }

  admit(keyId: string, slotId: string): Promise<AdmitOutcome> {
    return this.run((store) => store.admit(keyId, slotId));
  }

  failedAuth(address: string): Promise<FailedAuthOutcome> {
    return this.run((store) => store.failedAuth(address));
  }

  private async run<T>(call: (store: LimitStore) => Promise<T>): Promise<T> {
    const epoch = this.epoch;
    const probing = !this.shared && this.probeDue();
    if (this.shared || probing) {
      try {
        const result = await call(this.redis);
        if (probing) this.toShared();
        return result;
      } catch (error) {
        this.toLocal(error, epoch);
      }
    }
    return call(this.local);
  }

  private probeDue(): boolean {
    const now = this.options.clock();
    if (now < this.nextProbeAt) return false;
    this.nextProbeAt = now + this.options.probeIntervalMs;
    return true;
  }

  private toLocal(error: unknown, epoch: number): void {
    this.nextProbeAt = this.options.clock() + this.options.probeIntervalMs;
    if (!this.shared || epoch !== this.epoch) return;
    this.shared = false;
    this.epoch++;
    const reason = error instanceof Error ? error.message : String(error);
    this.options.logger.warn(
      `limits: Redis is unavailable (${reason}); each replica limits on its own until Redis answers again`,
    );
  }

  private toShared(): void {
    if (this.shared) return;
    this.shared = true;
    this.epoch++;
    this.options.logger.info('limits: Redis answers again; limits are shared by all replicas again');
  }
}
