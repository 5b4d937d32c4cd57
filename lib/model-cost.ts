// A model's cost class (models/registry.json `cost`): what one inference costs in time and memory,
// and how much longer than the job budget a job that runs it may take. The budget a user sets
// (the library's `timeout`, the server's MATTE_JOB_TIMEOUT_SECONDS) is sized for the default model;
// a 1024x1024 transformer takes many times longer for the same image, so its jobs get the budget
// times the class's scale rather than failing with job_timeout on every photo.
import type { LoadedModel } from './models.js';

export const COST_CLASSES = {
  /** 320x320 input, a few MB of weights (u2netp). */
  small: { timeoutScale: 1, expected: 'about 0.5 s of CPU and 0.3 GB peak a job (measured: u2netp)' },
  /** 320x320 input, the full U^2-Net (about 5x u2netp's operations). */
  medium: { timeoutScale: 1, expected: 'about 1-3 s of CPU and 0.5-1 GB peak a job (estimate: u2netp scaled by its operations)' },
  /** 1024x1024 input, a convolutional network (IS-Net). */
  large: { timeoutScale: 2, expected: 'about 2.5 s of CPU and 0.75 GB peak a job (measured: isnet, the same IS-Net at 1024x1024)' },
  /** 1024x1024 input, a Swin transformer (BiRefNet). */
  huge: { timeoutScale: 8, expected: 'about 15-30 s of CPU and 3-6 GB peak a job (estimate, not measured: 5-10x IS-Net)' },
} as const;

export type CostClass = keyof typeof COST_CLASSES;

/** The job budget for a job that runs `model` (0, no limit, stays 0). */
export function scaledTimeoutMs(timeoutMs: number, model: LoadedModel | undefined): number {
  const cost = model?.entry.cost;
  if (!timeoutMs || !cost || !Object.hasOwn(COST_CLASSES, cost)) return timeoutMs;
  return timeoutMs * COST_CLASSES[cost].timeoutScale;
}
