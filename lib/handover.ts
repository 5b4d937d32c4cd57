// Input buffers a caller hands over to matte: the caller promises never to write to, reuse or
// transfer them again, so a job reads them in place instead of copying them when it starts (the
// library's default, lib/index.ts toBuffer; README, "Library"). The server hands over
// the upload it has just read: that copy was as large as the upload (up to MATTE_MAX_INPUT_BYTES)
// and made on the main thread, for a buffer nothing else holds.
const handedOver = new WeakSet<Uint8Array>();

/** Marks `buffer` as handed over (see above) and returns it. */
export function handOver<T extends Uint8Array>(buffer: T): T {
  handedOver.add(buffer);
  return buffer;
}

/** Whether `buffer` was handed over. */
export function isHandedOver(buffer: Uint8Array): boolean {
  return handedOver.has(buffer);
}
