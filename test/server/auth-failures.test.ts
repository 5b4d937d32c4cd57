// run-tests: parallel
// The wrong-key count on its own clock (server/auth-failures.ts): the minute, Retry-After, and the
// table's bounds, which a test through the server could only reach by waiting or by 10,000 addresses.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AuthFailures, countedAs } from '../../server/auth-failures.js';
import { HttpError } from '../../server/errors.js';

/** 401 (counted) or 429 (the error's Retry-After). */
function answer(failures: AuthFailures, address: string, key: string): number | string {
  try {
    failures.wrongKey(address, key);
    return 401;
  } catch (err) {
    assert.instance(err, HttpError);
    assert.is((err as HttpError).status, 429);
    return `429 retry ${(err as HttpError).headers['Retry-After']}`;
  }
}

test('one key fails its count, different keys theirs; Retry-After is what is left of the minute; then all is forgotten', () => {
  let now = 1_000_000;
  const failures = new AuthFailures(2, () => now);
  assert.is(answer(failures, 'a', 'stale'), 401);
  now += 10_000;
  assert.is(answer(failures, 'a', 'stale'), 401);
  assert.is(answer(failures, 'a', 'stale'), '429 retry 50');
  assert.is(answer(failures, 'a', ''), 401, 'a second key (none at all)');
  assert.is(answer(failures, 'a', 'guess'), '429 retry 50', 'a third key');
  assert.is(answer(failures, 'b', 'stale'), 401, 'another address');
  now += 49_500;
  assert.is(answer(failures, 'a', 'stale'), '429 retry 1');
  now += 500;
  assert.is(answer(failures, 'a', 'stale'), 401, 'a new minute');
  assert.is(answer(failures, 'a', 'guess'), 401);
});

test('what the throttle counts: an IPv4 address as itself (mapped or not), an IPv6 address as its /64', () => {
  assert.is(countedAs('198.51.100.4'), '198.51.100.4');
  assert.is(countedAs('::ffff:198.51.100.4'), '198.51.100.4');
  assert.is(countedAs('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  assert.is(countedAs('2001:0db8:0001:0002::'), '2001:db8:1:2::/64');
  assert.is(countedAs('2001:db8:1:3::1'), '2001:db8:1:3::/64');
  assert.is(countedAs('not an address'), 'not an address');
});

test('0: no limit', () => {
  const failures = new AuthFailures(0);
  for (let i = 0; i < 100; i++) assert.is(answer(failures, 'a', `guess-${i % 3}`), 401);
});

test('bounded: past 10,000 addresses the oldest is forgotten first', () => {
  const failures = new AuthFailures(1, () => 0);
  assert.is(answer(failures, 'first', 'k'), 401);
  assert.is(answer(failures, 'first', 'k'), '429 retry 60');
  for (let i = 0; i < 10_000; i++) answer(failures, `address-${i}`, 'k');
  assert.is(answer(failures, 'first', 'k'), 401, 'forgotten');
  assert.is(answer(failures, 'address-9999', 'k'), '429 retry 60', 'the newest are kept');
});

test('bounded: past 100,000 keys the oldest addresses go; an address that alone fills the table gets 429', () => {
  const failures = new AuthFailures(1_000_000, () => 0);
  assert.is(answer(failures, 'old', 'k'), 401);
  for (let i = 0; i < 99_999; i++) failures.wrongKey('flood', `k${i}`);
  assert.is(answer(failures, 'flood', 'one more'), 401, 'room made by forgetting the oldest address');
  assert.is(answer(failures, 'flood', 'and another'), '429 retry 60', 'the flood is all the table holds: nothing left to forget');
  assert.is(answer(failures, 'new', 'k'), 401, 'a new address makes room by forgetting the flood');
  assert.is(answer(failures, 'flood', 'k0'), 401, "the flood's count is gone");
});

test.run();
