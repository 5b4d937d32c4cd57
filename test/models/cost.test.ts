// run-tests: parallel
// Cost classes (lib/model-cost.ts): every registry entry has one, the 1024x1024 transformers are
// `huge`, and a job that runs a model gets the budget times its class's scale (0, no limit, stays 0).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { COST_CLASSES, modelRegistry, type LoadedModel } from '../../lib/index.js';
import { scaledTimeoutMs } from '../../lib/model-cost.js';

test('every registry entry has a cost class; BiRefNet is huge, IS-Net large, u2netp small', async () => {
  const { models } = await modelRegistry();
  for (const [name, entry] of Object.entries(models)) assert.ok(entry.cost && entry.cost in COST_CLASSES, `${name} has a cost class`);
  for (const [name, entry] of Object.entries(models)) if (entry.family === 'birefnet') assert.is(entry.cost, 'huge', name);
  assert.is(models['isnet-general-use']!.cost, 'large');
  assert.is(models.u2netp!.cost, 'small');
});

test("a job's budget is scaled by its model's class", async () => {
  const { models } = await modelRegistry();
  const model = (name: string) => ({ name, entry: models[name]! }) as LoadedModel;
  assert.is(scaledTimeoutMs(30_000, model('u2netp')), 30_000);
  assert.is(scaledTimeoutMs(30_000, model('isnet-general-use')), 30_000 * COST_CLASSES.large.timeoutScale);
  assert.is(scaledTimeoutMs(30_000, model('birefnet-general')), 30_000 * COST_CLASSES.huge.timeoutScale);
  assert.is(scaledTimeoutMs(0, model('birefnet-general')), 0, 'no limit stays no limit');
  assert.is(scaledTimeoutMs(30_000, undefined), 30_000, 'an edit without a model');
});

test.run();
