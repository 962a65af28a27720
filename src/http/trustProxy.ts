/**
 * Fastify's `trustProxy` from the TRUST_PROXY setting: which hops of X-Forwarded-For are believed
 * when the client address (the one failed-auth limiting counts) is determined.
 */
import type { Settings } from '../config.js';

type TrustProxyOption = boolean | string[] | ((address: string, hop: number) => boolean);

/**
 * A flag and proxy addresses/CIDRs go to Fastify as they are. A hop count does not: Fastify 5 ignores
 * a number (it cannot tell whether the peer is a proxy), which would count every client behind the
 * load balancer as the load balancer. Here the nearest `hops` peers are trusted, as Express does it;
 * right only where the replicas are reachable through the proxies alone (docker-compose.yml).
 */
export function trustProxyOption(setting: Settings['TRUST_PROXY']): TrustProxyOption {
  if (typeof setting !== 'number') return setting;
  const hops = setting;
  return (_address, hop) => hop < hops;
}
