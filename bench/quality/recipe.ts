// The quality recipe (bench/quality/recipe.json) and where its generated files live.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Recipe {
  about: string;
  packages: { name: string; version: string; root: string }[];
  composite: { subjectShare: number; minLongSide: number; seed: number; split: string };
  cutouts: string[];
  backgrounds: string[];
}

/** bench/quality in the source tree (this file runs from dist/bench/quality). */
export const QUALITY_DIR = fileURLToPath(new URL('../../../bench/quality/', import.meta.url));
/** Everything generated: git-ignored. */
export const DATA_DIR = join(QUALITY_DIR, 'data');

export function readRecipe(): Recipe {
  return JSON.parse(readFileSync(join(QUALITY_DIR, 'recipe.json'), 'utf8')) as Recipe;
}

/** `07-tiger_sumatran`: the recipe index keeps names unique and ordered. */
export function compositeName(index: number, cutout: string): string {
  const base = cutout.split('/').pop()!.replace(/\.png$/i, '');
  return `${String(index).padStart(2, '0')}-${base}`;
}

/** Parameters are tuned on the even composites and reported on the odd ones (held out). */
export function splitOf(index: number): 'tune' | 'report' {
  return index % 2 === 0 ? 'tune' : 'report';
}
