// A small seeded PRNG (mulberry32) for the tests that make inputs at random: a failure is
// reproduced from its seed. test/fuzz/mutate.ts's Rng gives the same sequence.
export function random(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
