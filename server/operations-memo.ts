// The `operations` field of POST /images/edit, validated once per distinct text: clients repeat the
// same few operation lists, and parseOperationsJson is a pure function of the text, so the main
// thread need not run the zod validation again for the same answer. Every call gets its own copy
// of the steps: the route fills in refine and model, and the job must not see another request's.
// Invalid texts are not kept: each one is parsed again and throws the same error.
import { parseOperationsJson, type Step } from '../lib/index.js';

/** Longer texts are parsed every time (a 20-operation list is well under this). */
export const MEMO_MAX_TEXT = 2048;
/** Distinct texts kept, the oldest dropped first: at most 512 K characters of keys. */
export const MEMO_MAX_ENTRIES = 256;

const memo = new Map<string, Step[]>();

/**
 * A copy of plain JSON-like data (objects, arrays, primitives; keys and their order kept).
 * structuredClone would do, at several times the cost: most of what the memo saves.
 */
function copy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copy) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key]);
    return out as T;
  }
  return value;
}

/** parseOperationsJson(text), the validation done once per distinct text; a fresh copy each call. */
export function parseOperationsMemo(text: string): Step[] {
  const known = memo.get(text);
  if (known) return copy(known);
  const steps = parseOperationsJson(text);
  if (text.length <= MEMO_MAX_TEXT) {
    if (memo.size >= MEMO_MAX_ENTRIES) memo.delete(memo.keys().next().value!);
    memo.set(text, copy(steps));
  }
  return steps;
}

/** How many texts are kept (tests). */
export function memoSize(): number {
  return memo.size;
}
