/** Whom failed-auth limiting counts: the address as the HTTP layer determined it, normalised. */
import { isIPv6 } from 'node:net';

/**
 * An IPv4 address counts as itself (also when written IPv4-mapped, `::ffff:a.b.c.d`); an IPv6 address
 * counts as its /64 network, because one host usually owns a whole /64 and could otherwise take a
 * fresh address for every guess.
 */
export function failedAuthSubject(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  const withoutZone = address.split('%')[0] ?? address;
  if (!isIPv6(withoutZone)) return address;
  return `${ipv6Groups(withoutZone).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, in lower-case hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  // An embedded IPv4 tail (`::ffff:1.2.3.4`, `64:ff9b::1.2.3.4`) fills the last two groups.
  const groups = (part: string) =>
    part === '' ? [] : part.split(':').flatMap((group) => (group.includes('.') ? ['0', '0'] : [group]));
  const [head = '', tail] = address.split('::');
  const before = groups(head);
  const after = tail === undefined ? [] : groups(tail);
  const zeros = Array<string>(8 - before.length - after.length).fill('0');
  return [...before, ...zeros, ...after].map((group) => Number.parseInt(group, 16).toString(16));
}
