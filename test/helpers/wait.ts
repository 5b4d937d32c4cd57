// Tests wait for conditions, never for fixed times: waitFor polls a predicate until it holds or a
// bounded deadline passes, and then fails with a message saying what it waited for.

/** What a check returns once it holds. */
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

export interface WaitOptions {
  /** The longest wait before failing; generous, since the machines running tests are shared. */
  timeoutMs?: number;
  /** The pause between two checks. */
  intervalMs?: number;
}

/**
 * Resolves with the first truthy value `check` returns; rejects after `timeoutMs` with
 * "timed out after N ms waiting for WHAT" (`what` may be a function, read at that moment, to show
 * the state seen last). A check that throws counts as not yet; its last error is in the message.
 */
export async function waitFor<T>(what: string | (() => string), check: () => T | Promise<T>, options: WaitOptions = {}): Promise<Truthy<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 20;
  const until = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as Truthy<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= until) break;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const described = typeof what === 'function' ? what() : what;
  const cause = lastError === undefined ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${described}${cause}`);
}
