// run-tests: parallel
// The URL guard's address classifier as a pure function over every range docs/api.md,
// "Input", forbids. No packet is sent anywhere: these are strings.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { classifyAddress } from '../../server/input/address-guard.js';

const refused: Array<[string, string]> = [
  // IPv4
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'], // cloud metadata
  ['169.254.0.1', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.254', 'carrierGradeNat'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.2.1', 'reserved'], // documentation
  ['198.18.0.1', 'reserved'], // benchmarking
  // other IPv4 spellings
  ['2130706433', 'loopback'],
  ['0x7f000001', 'loopback'],
  ['017700000001', 'loopback'],
  // IPv6
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1', 'linkLocal'],
  ['febf:ffff::1', 'linkLocal'],
  ['fc00::1', 'uniqueLocal'],
  ['fd12:3456:789a::1', 'uniqueLocal'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['2001:db8::1', 'reserved'],
  ['100::1', 'discard'],
  ['2001::1', 'teredo'],
  ['fe80::1%eth0', 'zoned'],
  // IPv6 forms that embed a refused IPv4 address
  ['::ffff:127.0.0.1', 'ipv4Mapped>loopback'],
  ['[::ffff:127.0.0.1]', 'ipv4Mapped>loopback'],
  ['::ffff:7f00:1', 'ipv4Mapped>loopback'],
  ['::ffff:10.0.0.1', 'ipv4Mapped>private'],
  ['::ffff:169.254.169.254', 'ipv4Mapped>linkLocal'],
  ['::ffff:0:127.0.0.1', 'rfc6145>loopback'],
  ['::127.0.0.1', 'ipv4Compatible>loopback'],
  ['::8.8.8.8', 'ipv4Compatible>unicast'], // deprecated form: refused whatever it embeds
  ['64:ff9b::127.0.0.1', 'nat64>loopback'],
  ['64:ff9b::a00:1', 'nat64>private'],
  ['64:ff9b::c0a8:101', 'nat64>private'],
  ['64:ff9b:1::1', 'nat64LocalUse'],
  ['2002:7f00:1::1', '6to4>loopback'],
  ['2002:a00:1::1', '6to4>private'],
  ['2002:a9fe:a9fe::1', '6to4>linkLocal'],
  ['2002:6440:1::', '6to4>carrierGradeNat'],
  // not addresses at all
  ['example.com', 'invalid'],
  ['', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
];

for (const [address, range] of refused) {
  test(`refuses ${address || '(empty)'} (${range})`, () => {
    const verdict = classifyAddress(address);
    assert.is(verdict.allowed, false);
    assert.is(verdict.range, range);
  });
}

const allowed = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '172.15.255.255', // just below 172.16/12
  '172.32.0.1', // just above
  '100.63.255.255', // just below 100.64/10
  '100.128.0.1', // just above
  '169.253.255.255',
  '2606:4700:4700::1111',
  '2a00:1450:4001::200e',
  '::ffff:8.8.8.8', // mapped public IPv4
  '64:ff9b::808:808', // NAT64 of a public IPv4
  '2002:808:808::1', // 6to4 of a public IPv4
];

for (const address of allowed) {
  test(`allows ${address}`, () => {
    assert.is(classifyAddress(address).allowed, true, JSON.stringify(classifyAddress(address)));
  });
}

test.run();
