/**
 * The Lua scripts that make a limit decision atomic in Redis. They run through ioredis `defineCommand`
 * (EVALSHA, loading the script once per connection), so each decision is one round trip.
 *
 * Time is Redis's own clock (TIME), one clock for every replica: a replica whose clock is off cannot
 * give its clients more tokens. Numbers are microseconds; they are written with '%.0f' because Lua
 * turns a number into a string with 14 digits, which would round a 16-digit time.
 */
import type { Redis } from 'ioredis';

/**
 * KEYS: bucket (GCRA arrival time), slots (sorted set: slot id → lease expiry).
 * ARGV: token interval µs, burst, concurrency, lease µs, slot id.
 * Returns {1, µs ahead} admitted, {0, µs to wait} empty bucket, {2, µs ahead} no free slot (token taken).
 * Same arithmetic as tokenBucket.ts and memoryStore.ts.
 */
const admit = `
local interval = tonumber(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local stored = redis.call('GET', KEYS[1])
local arrival = stored and tonumber(stored) or now
if arrival < now then arrival = now end
local next = arrival + interval
local wait = next - tonumber(ARGV[2]) * interval - now
if wait > 0 then return {0, wait} end
redis.call('SET', KEYS[1], string.format('%.0f', next), 'PX', math.ceil((next - now) / 1000))

local lease = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now))
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return {2, next - now} end
redis.call('ZADD', KEYS[2], string.format('%.0f', now + lease), ARGV[5])
redis.call('PEXPIRE', KEYS[2], math.ceil(lease / 1000))
return {1, next - now}
`;

/**
 * KEYS: slots. ARGV: slot id, lease µs. Extends the slot's lease, adding it again if it expired
 * meanwhile (its response is still running) or Redis restarted empty. The set lives as long as its
 * newest lease, so a key nobody uses leaves nothing behind.
 */
const renew = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], string.format('%.0f', now + lease), ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.ceil(lease / 1000))
return 1
`;

/** The scripts as ioredis commands, and the numeric reply shapes they give. */
export interface LimitCommands {
  gwapiLimitsAdmit(
    bucketKey: string,
    slotsKey: string,
    intervalUs: number,
    burst: number,
    concurrency: number,
    leaseUs: number,
    slotId: string,
  ): Promise<[0 | 1 | 2, number]>;
  gwapiLimitsRenew(slotsKey: string, slotId: string, leaseUs: number): Promise<number>;
}

export function defineLimitCommands(redis: Redis): Redis & LimitCommands {
  redis.defineCommand('gwapiLimitsAdmit', { numberOfKeys: 2, lua: admit });
  redis.defineCommand('gwapiLimitsRenew', { numberOfKeys: 1, lua: renew });
  return redis as Redis & LimitCommands;
}
