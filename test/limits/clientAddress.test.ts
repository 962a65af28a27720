import t from 'tap';
import { failedAuthSubject } from '../../src/limits/clientAddress.js';

const cases: [string, string, string][] = [
  ['203.0.113.9', '203.0.113.9', 'IPv4 counts as itself'],
  ['::ffff:203.0.113.9', '203.0.113.9', 'IPv4-mapped IPv6 is the IPv4 address'],
  ['::FFFF:203.0.113.9', '203.0.113.9', 'in upper case too'],
  ['2001:db8:a:b:c:d:e:f', '2001:db8:a:b::/64', 'IPv6 counts as its /64'],
  ['2001:0DB8:000a:000b::1', '2001:db8:a:b::/64', 'leading zeros and case do not matter'],
  ['2001:db8::1', '2001:db8:0:0::/64', ':: expands inside the prefix'],
  ['::1', '0:0:0:0::/64', 'loopback'],
  ['fe80::1%eth0', 'fe80:0:0:0::/64', 'a zone index is ignored'],
  ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64', 'an embedded IPv4 tail fills two groups'],
  ['not-an-address', 'not-an-address', 'anything else counts as written'],
];
for (const [address, subject, why] of cases) {
  t.equal(failedAuthSubject(address), subject, `${address}: ${why}`);
}
