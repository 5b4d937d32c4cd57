// The copy of a library input that a job reads (the caller may overwrite, reuse or detach its own
// buffer while the job runs). Copies are kept and reused once their job has ended: a fresh copy a
// job lands in fresh pages until V8 collects the earlier ones, and a new process's first jobs paid
// for those page faults (bench/README.md, "Edit: the library's input copies").
const MAX_POOLED_BYTES = 16 * 1024 * 1024;
const MAX_POOLED = 4;
const free: Buffer[] = [];

export interface InputCopy {
  bytes: Buffer;
  /** Gives the copy back for another job: only once nothing reads it any more (the job has settled). */
  release(): void;
}

const unpooled = (input: Uint8Array): InputCopy => ({ bytes: Buffer.copyBytesFrom(input), release() {} });

export function copyInput(input: Uint8Array): InputCopy {
  const size = input.byteLength;
  if (size === 0 || size > MAX_POOLED_BYTES) return unpooled(input);
  let best = -1;
  for (let i = 0; i < free.length; i++) if (free[i]!.length >= size && (best < 0 || free[i]!.length < free[best]!.length)) best = i;
  const store = best >= 0 ? free.splice(best, 1)[0]! : Buffer.allocUnsafeSlow(size);
  store.set(input);
  let released = false;
  return {
    bytes: store.subarray(0, size),
    release() {
      if (released) return;
      released = true;
      if (free.length < MAX_POOLED) free.push(store);
    },
  };
}
