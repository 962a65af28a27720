/**
 * API keys: 256 random bits in a recognisable format (`gw_` + 43 base64url characters), so secret
 * scanners and people can tell one when they see it. Only the SHA-256 hash is stored: a key has far
 * too much entropy to be brute-forced from its hash, so a slow password hash would only cost latency.
 */
import { hash, randomBytes } from 'node:crypto';

const PREFIX = 'gw_';
const KEY_SHAPE = /^gw_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return PREFIX + randomBytes(32).toString('base64url');
}

/** The non-secret name of a key, used in logs, metrics and the CLI. */
export function generateKeyId(): string {
  return `key_${randomBytes(6).toString('hex')}`;
}

/** Whether a presented value could be a key at all (cheap rejection before any lookup). */
export function looksLikeApiKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}

/**
 * SHA-256 of a key as hex: what the key cache is keyed by, on every request. The one-shot crypto.hash
 * straight to hex skips a Hash object and the native ArrayBuffer Node makes for every Buffer digest
 * (docs/decisions/0013-per-request-costs.md).
 */
export function apiKeyDigest(key: string): string {
  return hash('sha256', key, 'hex');
}

/** SHA-256 of a key as bytes: what the database stores (api_keys.key_hash) and looks up. */
export const digestBytes = (digest: string): Buffer => Buffer.from(digest, 'hex');

export const hashApiKey = (key: string): Buffer => digestBytes(apiKeyDigest(key));
