// How far V8 lets the server's JavaScript heap grow before a full collection. The server's live heap
// is small while every request moves megabytes through Buffers (a source body arrives in 64 KB
// socket reads, an upload likewise), and with V8's own limit, close above the live heap, those
// requests kept starting full mark-compacts (bench/README.md, "The heap growing factor"). A fixed
// growing factor keeps the limit several live heaps away, and the Buffers, dead young, go with the
// cheap scavenges instead. A --heap-growing-percent given to node wins.
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 400;

/** The V8 flag the server sets, or undefined when node was given one (its command line wins). */
export function heapGrowingFlag(execArgv: readonly string[]): string | undefined {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))) return undefined;
  return `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/** Sets the growing factor for this process (V8 reads it whenever it recomputes its limits). */
export function tuneHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  const flag = heapGrowingFlag(execArgv);
  if (flag) setFlagsFromString(flag);
}
