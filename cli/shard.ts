// Sharding a batch without a coordinator (docs/api.md, "Command line"): shard I of N takes the
// inputs whose name hashes to I. The hash is SHA-256 of the input's name relative to its prefix or
// folder, without its extension, read as a big-endian 64-bit number, modulo N: stable across runs,
// machines and listing orders, and spread evenly (2^64 mod N leaves a bias below 1e-15). Without the
// extension, so that inputs that would write the same result (a.jpg and a.png -> a.png) meet in
// one shard, where the second is refused rather than overwriting the first from another pod.
import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { CliError } from './errors.js';

export interface Shard {
  index: number;
  count: number;
}

/** The variables a sharded batch reads (docs/configuration.md's table has a row for each). */
export const SHARD_VARIABLES = ['MATTE_SHARDS', 'JOB_COMPLETION_INDEX'] as const;

/** The most shards a batch may be cut into (a Kubernetes Indexed Job allows 100,000 completions). */
export const MAX_SHARDS = 100_000;

function check(index: number, count: number, what: string): Shard {
  if (count < 1 || count > MAX_SHARDS) throw new CliError(`${what}: the shard count must be 1..${MAX_SHARDS}`, 'invalid_option', 'shard');
  if (index >= count) throw new CliError(`${what}: the shard index must be below the count (0..${count - 1})`, 'invalid_option', 'shard');
  return { index, count };
}

/** `--shard I/N` (commander's parser: a malformed value is a usage error). */
export function parseShard(value: string): Shard {
  const match = /^(\d{1,6})\/(\d{1,6})$/.exec(value.trim());
  if (!match) throw new InvalidArgumentError(`--shard must be I/N, the shard's index from 0 and the count (e.g. 3/16), not "${value}"`);
  try {
    return check(Number(match[1]), Number(match[2]), `--shard ${value}`);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function wholeNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name]?.trim();
  if (!text) return undefined;
  if (!/^\d{1,6}$/.test(text)) throw new CliError(`${name}=${JSON.stringify(text)} is not a whole number`, 'invalid_option', name);
  return Number(text);
}

/**
 * The shard this process works on: `--shard I/N`; else, in a Kubernetes Indexed Job, the index from
 * JOB_COMPLETION_INDEX and the count from `--shards N` or MATTE_SHARDS (the Job's completions);
 * else none (every input).
 */
export function resolveShard(flag: Shard | undefined, shards: number | undefined, env: NodeJS.ProcessEnv = process.env): Shard | undefined {
  if (flag) return flag;
  const count = shards ?? wholeNumber(env, 'MATTE_SHARDS');
  const index = wholeNumber(env, 'JOB_COMPLETION_INDEX');
  const countName = shards !== undefined ? `--shards ${shards}` : `MATTE_SHARDS=${count}`;
  if (index === undefined) {
    if (count === undefined) return undefined;
    throw new CliError(`${countName} needs JOB_COMPLETION_INDEX (set by a Kubernetes Indexed Job); elsewhere give --shard I/N`, 'invalid_option', 'shard');
  }
  if (count === undefined) throw new CliError(`JOB_COMPLETION_INDEX=${index} is set but not the shard count: set MATTE_SHARDS (the Job's completions) or --shards N, or give --shard I/N`, 'invalid_option', 'shard');
  return check(index, count, `JOB_COMPLETION_INDEX=${index} with ${countName}`);
}

/** What an input's shard is computed from: its name without the extension. */
export function shardKey(name: string): string {
  const ext = extname(name);
  return ext ? name.slice(0, -ext.length) : name;
}

/** The shard (0..count-1) of an input's relative name. */
export function shardOf(name: string, count: number): number {
  if (count === 1) return 0;
  const digest = createHash('sha256').update(shardKey(name), 'utf8').digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(count));
}
