// Repeated wrong keys from one address are slowed (MATTE_AUTH_FAILURES_PER_MINUTE): past that many
// 401s within a minute of its first, every key check from the address is answered 429 with
// Retry-After until the minute is over, a right key included (else the 429 would tell a guesser
// nothing and slow nothing). The table is bounded: beyond MAX_ADDRESSES the oldest entries go.
import { HttpError } from './errors.js';

const WINDOW_MS = 60_000;
const MAX_ADDRESSES = 10_000;

export class AuthFailures {
  private readonly byAddress = new Map<string, { count: number; since: number }>();

  constructor(
    /** Failures allowed per address and minute; 0: no limit. */
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws 429 when `address` has used up its failures for this minute. */
  check(address: string): void {
    if (this.perMinute === 0) return;
    const entry = this.current(address);
    if (entry && entry.count >= this.perMinute) {
      const seconds = Math.max(1, Math.ceil((entry.since + WINDOW_MS - this.now()) / 1000));
      throw new HttpError(429, 'too_many_failures', `too many requests with a wrong key from this address; retry in ${seconds} s`, {
        headers: { 'Retry-After': String(seconds) },
        closeConnection: true,
      });
    }
  }

  /** Counts a failed key check from `address`. */
  failed(address: string): void {
    if (this.perMinute === 0) return;
    const entry = this.current(address);
    if (entry) {
      entry.count++;
      return;
    }
    if (this.byAddress.size >= MAX_ADDRESSES) this.byAddress.delete(this.byAddress.keys().next().value!);
    this.byAddress.set(address, { count: 1, since: this.now() });
  }

  private current(address: string): { count: number; since: number } | undefined {
    const entry = this.byAddress.get(address);
    if (entry && this.now() - entry.since >= WINDOW_MS) {
      this.byAddress.delete(address);
      return undefined;
    }
    return entry;
  }
}
