// Wrong keys are slowed per client address (docs/api.md, "Authentication"), and a right key is
// always served: clients that share an address (behind one proxy or NAT) are never refused for
// another's wrong keys. Within a minute of an address's first failure, each wrong key (told apart
// by a keyed hash, so the table holds no key) fails at most MATTE_AUTH_FAILURES_PER_MINUTE times
// (a stale key in a retry loop), and at most that many different wrong keys are tried; past
// either, a wrong key from there is answered 429 with Retry-After until the minute is over. This
// bounds what wrong keys cost, not guessing: a right guess is still served (docs/api.md says why). The table is bounded: beyond MAX_ADDRESSES addresses or MAX_KEYS keys the oldest
// addresses go. An IPv6 client counts as its /64, the block one host or one home is given, so
// that moving through its own addresses does not start it afresh.
import { createHmac, randomBytes } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { HttpError } from './errors.js';

const WINDOW_MS = 60_000;
const MAX_ADDRESSES = 10_000;
const MAX_KEYS = 100_000;

interface AddressFailures {
  since: number;
  /** Failures of each wrong key (by fingerprint) within the minute. */
  keys: Map<string, number>;
}

export class AuthFailures {
  private readonly byAddress = new Map<string, AddressFailures>();
  private keysHeld = 0;
  private readonly secret = randomBytes(32);

  constructor(
    /** Failures allowed per address, wrong key and minute, and different wrong keys per address and minute; 0: no limit. */
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts a wrong or missing `key` from `address` (the caller then answers 401), or throws 429
   * when that key, or the address's count of different wrong keys, is used up for this minute.
   */
  wrongKey(address: string, key: string): void {
    if (this.perMinute === 0) return;
    const entry = this.entry(countedAs(address));
    const fingerprint = createHmac('sha256', this.secret).update(key, 'utf8').digest('base64url').slice(0, 16);
    const count = entry.keys.get(fingerprint);
    if (count !== undefined) {
      if (count >= this.perMinute) throw this.tooMany(entry);
      entry.keys.set(fingerprint, count + 1);
      return;
    }
    if (entry.keys.size >= this.perMinute) throw this.tooMany(entry);
    while (this.keysHeld >= MAX_KEYS && this.forgetOldest(entry));
    if (this.keysHeld >= MAX_KEYS) throw this.tooMany(entry); // this address alone fills the table
    entry.keys.set(fingerprint, 1);
    this.keysHeld++;
  }

  private entry(address: string): AddressFailures {
    const now = this.now();
    const current = this.byAddress.get(address);
    if (current && now - current.since < WINDOW_MS) return current;
    if (current) this.forget(address, current);
    if (this.byAddress.size >= MAX_ADDRESSES) this.forgetOldest();
    const entry: AddressFailures = { since: now, keys: new Map() };
    this.byAddress.set(address, entry);
    return entry;
  }

  private tooMany(entry: AddressFailures): HttpError {
    const seconds = Math.max(1, Math.ceil((entry.since + WINDOW_MS - this.now()) / 1000));
    return new HttpError(429, 'too_many_failures', `too many requests with a wrong key from this address; retry in ${seconds} s`, {
      headers: { 'Retry-After': String(seconds) },
      closeConnection: true,
    });
  }

  /** Forgets the oldest address other than `keep`; false when there is none. */
  private forgetOldest(keep?: AddressFailures): boolean {
    for (const [address, entry] of this.byAddress) {
      if (entry === keep) continue;
      this.forget(address, entry);
      return true;
    }
    return false;
  }

  private forget(address: string, entry: AddressFailures): void {
    this.byAddress.delete(address);
    this.keysHeld -= entry.keys.size;
  }
}

/** What an address is counted as: an IPv4 address (an IPv4-mapped IPv6 one too) as itself, an IPv6 address as its /64. */
export function countedAs(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
