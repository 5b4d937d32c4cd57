// The periodic sweep every store runs in every process: one unref'd interval (it never keeps the
// process alive), errors handed to the store's error callback instead of becoming unhandled.

export class Sweeper {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sweep: () => Promise<unknown>,
    /** 0 turns the sweeper off. */
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => this.sweep().catch(this.onError), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
