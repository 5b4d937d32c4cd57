// MATTE_RESULTS_MAX_BYTES: the bytes of unexpired results a store may hold, counted over the whole
// store (every process sharing the directory or bucket), not over this process's puts.
//
// The count comes from the store's last full scan (its sweep, which lists every result), plus what
// this process stored since. A scan older than `freshMs` is redone before a put, so results stored
// by other processes count within `freshMs`; between scans the bound can be passed by what the
// other processes store in that time (docs/api.md says so).
import { insufficientStorage } from './errors.js';

export class ResultsQuota {
  private bytes = 0;
  private results = 0;
  private scannedAt = Number.NEGATIVE_INFINITY;
  private addedSince = 0;
  private scanning: Promise<unknown> | undefined;

  constructor(
    /** 0: no quota. */
    readonly maxBytes: number,
    private readonly scan: () => Promise<unknown>,
    private readonly now: () => number,
    private readonly freshMs = 5000,
  ) {}

  /** Called by a full scan with the unexpired results it found and their bytes. */
  scanned(results: number, bytes: number): void {
    this.results = results;
    this.bytes = bytes;
    this.scannedAt = this.now();
    this.addedSince = 0;
  }

  /** Throws 507 insufficient_storage when `size` more bytes would pass the quota. */
  async admit(size: number): Promise<void> {
    if (this.maxBytes === 0) return;
    if (this.now() - this.scannedAt > this.freshMs) {
      this.scanning ??= this.scan().finally(() => (this.scanning = undefined));
      await this.scanning;
    }
    if (this.bytes + this.addedSince + size > this.maxBytes) {
      throw insufficientStorage(`the result store holds its maximum of ${this.maxBytes} bytes (MATTE_RESULTS_MAX_BYTES); retry later or use output=raw`);
    }
  }

  /** What the last full scan found (every process's results), or undefined before the first one. */
  get lastScan(): { results: number; bytes: number } | undefined {
    return this.scannedAt === Number.NEGATIVE_INFINITY ? undefined : { results: this.results, bytes: this.bytes };
  }

  /** A put of `size` bytes succeeded. */
  added(size: number): void {
    this.addedSince += size;
  }
}
