/** Concurrency slots as the replicas keep them in Redis, read by the drills to see what is still held. */
import type { Redis } from 'ioredis';

/** src/limits/redisStore.ts: a key's slots are a sorted set `gwapi:limits:{KEY_ID}:slots`. */
const slotsKey = (keyId: string) => `gwapi:limits:{${keyId}}:slots`;

/** Slots of `keyIds` whose lease has not run out (scores are lease ends, in Redis's own µs). */
export async function heldSlots(redis: Redis, keyIds: string[]): Promise<number> {
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1e6 + Number(micros);
  let slots = 0;
  for (const keyId of keyIds) slots += await redis.zcount(slotsKey(keyId), `(${now}`, '+inf');
  return slots;
}
