// Which entries a keyed area (the matte cache: disk-entries.ts, s3-entries.ts) deletes when it
// holds more than its bounds, without keeping its listing in memory. A first pass over the area
// adds every live entry to a histogram of expiry times (256 buckets over the lifetime); the plan
// then says which buckets go whole, the entries expiring soonest (the least recently used), and
// how much of one more bucket, and a second pass deletes as it walks: down to 80% of both bounds.
// Memory is the histogram's, whatever the number of entries.

const BUCKETS = 256;

/** Space and entries a sweep leaves free beyond the bounds (a write waiting for it). */
export interface Room {
  bytes: number;
  entries: number;
}
export const NO_ROOM: Room = { bytes: 0, entries: 0 };
/** Down to this share of each bound, so that a sweep is not needed again at the next write. */
export const EVICT_TO = 0.8;

export class EvictionPlan {
  private readonly bytes = new Float64Array(BUCKETS);
  private readonly counts = new Float64Array(BUCKETS);
  private readonly width: number;
  /** Entries and bytes added. */
  entries = 0;
  total = 0;
  /** Set by plan(): buckets below this go whole; of this one, what is still to free. */
  private whole = -1;
  private leftBytes = 0;
  private leftEntries = 0;

  constructor(
    private readonly now: number,
    /** The longest an entry lives from now (the area's lifetime). */
    lifetimeMs: number,
  ) {
    this.width = Math.max(1, lifetimeMs / BUCKETS);
  }

  private bucket(expiresAt: number): number {
    return Math.min(BUCKETS - 1, Math.max(0, Math.floor((expiresAt - this.now) / this.width)));
  }

  /** First pass: a live entry. */
  add(expiresAt: number, cost: number): void {
    const b = this.bucket(expiresAt);
    this.bytes[b]! += cost;
    this.counts[b]! += 1;
    this.entries++;
    this.total += cost;
  }

  /**
   * Whether the area, with `room` for what is about to be written, is over a bound; if so, plans the
   * deletions that bring it (room included) to EVICT_TO of both.
   */
  plan(maxBytes: number, maxEntries: number, room: Room = NO_ROOM): boolean {
    if (this.total + room.bytes <= maxBytes && this.entries + room.entries <= maxEntries) return false;
    let bytesOver = this.total + room.bytes - maxBytes * EVICT_TO;
    let entriesOver = this.entries + room.entries - Math.floor(maxEntries * EVICT_TO);
    let b = 0;
    while (b < BUCKETS - 1 && (bytesOver > this.bytes[b]! || entriesOver > this.counts[b]!)) {
      bytesOver -= this.bytes[b]!;
      entriesOver -= this.counts[b]!;
      b++;
    }
    this.whole = b;
    this.leftBytes = bytesOver;
    this.leftEntries = entriesOver;
    return true;
  }

  /** Second pass: whether to delete this entry (in walking order within the last bucket). */
  evicts(expiresAt: number, cost: number): boolean {
    const b = this.bucket(expiresAt);
    if (b < this.whole) return true;
    if (b > this.whole || (this.leftBytes <= 0 && this.leftEntries <= 0)) return false;
    this.leftBytes -= cost;
    this.leftEntries -= 1;
    return true;
  }
}
