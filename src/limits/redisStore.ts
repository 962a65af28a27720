/** Limits shared by every replica through one Redis: each decision is one atomic script call. */
import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { countFailedAuth } from './failedAuth.js';
import type { LimitParameters } from './parameters.js';
import { defineLimitCommands, type LimitCommands } from './redisScripts.js';
import type { AdmitOutcome, FailedAuthOutcome, HeldSlot, LimitStore } from './store.js';
import { bucketLevel } from './tokenBucket.js';

export class RedisLimitStore implements LimitStore {
  private readonly redis: Redis & LimitCommands;
  private readonly failedAuthLimiter: RateLimiterRedis;

  /** `keyPrefix` keeps deployments (and test files) sharing one Redis apart. */
  constructor(
    redis: Redis,
    private readonly parameters: LimitParameters,
    private readonly keyPrefix: string,
  ) {
    this.redis = defineLimitCommands(redis);
    // A fixed window per address is all failed-auth limiting needs; the library does it well.
    this.failedAuthLimiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}failed-auth`,
      points: parameters.failedAuthLimit,
      duration: parameters.failedAuthWindowSeconds,
    });
  }

  async admit(keyId: string, slotId: string): Promise<AdmitOutcome> {
    const { burst, tokenIntervalUs, concurrency, leaseUs } = this.parameters;
    const slotsKey = this.key(keyId, 'slots');
    const [code, us] = await this.redis.gwapiLimitsAdmit(
      this.key(keyId, 'bucket'),
      slotsKey,
      tokenIntervalUs,
      burst,
      concurrency,
      leaseUs,
      slotId,
    );
    if (code === 0) return { kind: 'rate', waitUs: us };
    if (code === 2) return { kind: 'concurrency' };
    return {
      kind: 'admitted',
      ...bucketLevel(us, tokenIntervalUs, burst),
      slot: this.slot(slotsKey, slotId),
    };
  }

  failedAuth(address: string): Promise<FailedAuthOutcome> {
    return countFailedAuth(this.failedAuthLimiter, address);
  }

  private slot(slotsKey: string, slotId: string): HeldSlot {
    return {
      renew: async () => {
        await this.redis.gwapiLimitsRenew(slotsKey, slotId, this.parameters.leaseUs);
      },
      release: async () => {
        await this.redis.zrem(slotsKey, slotId);
      },
    };
  }

  /** `{keyId}` is a Redis Cluster hash tag: a key's bucket and slots live on one node, as a script needs. */
  private key(keyId: string, part: 'bucket' | 'slots'): string {
    return `${this.keyPrefix}{${keyId}}:${part}`;
  }
}
