// A job that must fail: its MatteError and how long it took to fail (for "stopped within" bounds).
import * as assert from 'uvu/assert';
import { MatteError } from '../../lib/index.js';

export async function failure(job: Promise<unknown>): Promise<{ error: MatteError; ms: number }> {
  const started = performance.now();
  try {
    await job;
  } catch (error) {
    assert.instance(error, MatteError);
    return { error: error as MatteError, ms: performance.now() - started };
  }
  throw new Error('the job was expected to fail');
}

/** A job that must fail with `model_error` and a message matching `pattern`. */
export async function modelError(job: Promise<unknown>, pattern: RegExp): Promise<void> {
  const { error } = await failure(job);
  assert.is(error.code, 'model_error', String(error));
  assert.match(error.message, pattern);
}
