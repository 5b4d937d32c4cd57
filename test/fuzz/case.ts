// One fuzz case, how it is run and how its outcome is judged. Shared by the fuzzer's worker
// (test/fuzz/worker.ts) and the regression suite that replays saved cases (crashers.test.ts).
import { edit, type EditOptions } from '../../lib/index.js';
import { MatteError } from '../../lib/errors.js';
import { addon } from '../../lib/native.js';

export type CaseKind =
  /** lib's edit() with a valid operation list: a result or a typed error, never `internal`. */
  | 'edit'
  /** lib's edit() with an operation list the schema must refuse. */
  | 'invalid-operations'
  /** addon.run() directly with a plan that breaks lib's guarantees: a typed rejection. */
  | 'plan';

export interface FuzzCase {
  kind: CaseKind;
  /** Which seed, and the mutations applied (for the report only: `input` is the case). */
  seed: string;
  mutations: string[];
  input: Buffer;
  /** edit(): the operation list and options; plan: the plan object given to the addon. */
  operations?: unknown;
  options?: EditOptions;
  plan?: Record<string, unknown>;
  /**
   * A job budget of its own, in ms, far below the deadline: the job is then stopped part-way
   * (inside libvips or ONNX Runtime) and the stop path itself is fuzzed, under ASan the most likely
   * place for a use-after-free. Unset: the run's budget.
   */
  budgetMs?: number;
  /** A backgroundImage operation's background: the case's own input (a second decode of the same bytes). */
  backgroundIsInput?: true;
}

/**
 * Codes a job may end with. `job_timeout` and `aborted` come with the job time budget (issue 9);
 * listed already so the fuzzer keeps working when the budget lands.
 */
export const JOB_CODES = new Set(['invalid_operations', 'invalid_option', 'unsupported_image', 'image_too_large', 'model_error', 'job_timeout', 'aborted']);
/** What the addon may reject a broken plan with (its argument checks use `internal`). */
const PLAN_CODES = new Set([...JOB_CODES, 'internal']);

export interface Outcome {
  /** `result`, or the error code. */
  label: string;
  /** Set when the outcome breaks the contract (the case is a finding). */
  problem?: string;
}

function checkResult(r: { data?: unknown; width?: number; height?: number; frames?: number }): Outcome {
  if (!Buffer.isBuffer(r.data) || r.data.length === 0) return { label: 'result', problem: 'result without data' };
  if (!(r.width! >= 1 && r.height! >= 1 && r.frames! >= 1)) return { label: 'result', problem: `result of ${r.width}x${r.height}x${r.frames}` };
  return { label: 'result' };
}

/**
 * The job time budget (issue 9 item 1: lib's `timeout` option, in seconds, arrives with the addon's
 * createJob/cancel). Passed only when this build has it: before, edit() refuses unknown options.
 */
const hasBudget = typeof (addon as unknown as { createJob?: unknown }).createJob === 'function';
function withBudget(options: EditOptions, timeoutMs: number): EditOptions {
  return hasBudget ? ({ ...options, timeout: timeoutMs / 1000 } as EditOptions) : options;
}

/** Runs the case and judges the outcome. `runBudgetMs` is handed to the job budget where supported. */
export async function runCase(c: FuzzCase, runBudgetMs: number): Promise<Outcome> {
  const timeoutMs = c.budgetMs ?? runBudgetMs;
  if (c.kind === 'plan') {
    try {
      // timeoutMs: the addon's key for the job budget once it exists; ignored before.
      const r = await addon.run(c.input, { ...c.plan, timeoutMs } as never, undefined);
      return checkResult(r);
    } catch (err) {
      const code = (err as { code?: unknown })?.code;
      if (typeof code === 'string' && PLAN_CODES.has(code)) return { label: code };
      return { label: 'untyped', problem: `addon rejected without a known code: ${String(code)} ${(err as Error)?.message}` };
    }
  }
  try {
    const options = c.backgroundIsInput ? { ...c.options, backgroundImage: c.input } : (c.options ?? {});
    const r = await edit(c.input, c.operations, withBudget(options, timeoutMs));
    const outcome = checkResult(r);
    if (c.kind === 'invalid-operations') return { label: 'result', problem: 'an invalid operation list was accepted' };
    return outcome;
  } catch (err) {
    if (!(err instanceof MatteError)) return { label: 'untyped', problem: `not a MatteError: ${(err as Error)?.stack ?? err}` };
    if (c.kind === 'invalid-operations') {
      return err.code === 'invalid_operations' ? { label: err.code } : { label: err.code, problem: `expected invalid_operations: ${err.message}` };
    }
    if (!JOB_CODES.has(err.code)) return { label: err.code, problem: `${err.code}: ${err.message}` };
    return { label: err.code };
  }
}

// ---- saving and loading cases (JSON cannot hold NaN, Infinity or undefined, which cases use) ----

const SPECIAL = '$fuzz';

export function caseToJson(c: FuzzCase): string {
  const { input, ...rest } = c;
  return JSON.stringify(
    rest,
    function (key, value) {
      const raw = (this as Record<string, unknown>)[key];
      if (typeof raw === 'number' && !Number.isFinite(raw)) return { [SPECIAL]: String(raw) };
      if (raw === undefined && key !== '') return { [SPECIAL]: 'undefined' };
      if (typeof raw === 'number' && Object.is(raw, -0)) return { [SPECIAL]: '-0' };
      return value;
    },
    2,
  );
}

export function caseFromJson(text: string, input: Buffer): FuzzCase {
  const parsed = JSON.parse(text, (_key, value) => {
    if (value && typeof value === 'object' && SPECIAL in value) {
      const s = value[SPECIAL] as string;
      return s === 'undefined' ? undefined : s === '-0' ? -0 : Number(s);
    }
    return value;
  });
  return { ...parsed, input };
}
