// MATTE_RESULTS_MAX_BYTES and MATTE_RESULTS_MAX_ENTRIES: the space the unexpired results of a
// store may take and their number, counted over the whole store (every process sharing the
// directory or bucket), not over this process's puts. Space is what a result costs the store
// (common.ts storedCost: whole blocks, the disk's allocated blocks), never its length alone.
//
// The counts come from the store's last full scan (its sweep, which lists every result), plus what
// this process stored since. A scan older than `freshMs` is redone before a put, so results stored
// by other processes count within `freshMs`; between scans the bounds can be passed by what the
// other processes store in that time (docs/api.md says so).
import { insufficientStorage } from './errors.js';

export class ResultsQuota {
  private bytes = 0;
  private results = 0;
  private scannedAt = Number.NEGATIVE_INFINITY;
  private addedBytes = 0;
  private addedResults = 0;
  private scanning: Promise<unknown> | undefined;

  constructor(
    /** 0: no bound on the space. */
    readonly maxBytes: number,
    /** 0: no bound on the number. */
    readonly maxResults: number,
    private readonly scan: () => Promise<unknown>,
    private readonly now: () => number,
    private readonly freshMs = 5000,
  ) {}

  /** Called by a full scan with the unexpired results it found and the space they take. */
  scanned(results: number, bytes: number): void {
    this.results = results;
    this.bytes = bytes;
    this.scannedAt = this.now();
    this.addedBytes = 0;
    this.addedResults = 0;
  }

  /** Throws 507 insufficient_storage when one more result costing `cost` would pass a bound. */
  async admit(cost: number): Promise<void> {
    if (this.maxBytes === 0 && this.maxResults === 0) return;
    if (this.now() - this.scannedAt > this.freshMs) {
      this.scanning ??= this.scan().finally(() => (this.scanning = undefined));
      await this.scanning;
    }
    if (this.maxBytes !== 0 && this.bytes + this.addedBytes + cost > this.maxBytes) {
      throw insufficientStorage(`the result store holds its maximum of ${this.maxBytes} bytes (MATTE_RESULTS_MAX_BYTES, counted in whole blocks); retry later or use output=raw`);
    }
    if (this.maxResults !== 0 && this.results + this.addedResults + 1 > this.maxResults) {
      throw insufficientStorage(`the result store holds its maximum of ${this.maxResults} results (MATTE_RESULTS_MAX_ENTRIES); retry later or use output=raw`);
    }
  }

  /** What the last full scan found (every process's results), or undefined before the first one. */
  get lastScan(): { results: number; bytes: number } | undefined {
    return this.scannedAt === Number.NEGATIVE_INFINITY ? undefined : { results: this.results, bytes: this.bytes };
  }

  /** A put of a result costing `cost` succeeded. */
  added(cost: number): void {
    this.addedBytes += cost;
    this.addedResults += 1;
  }
}
