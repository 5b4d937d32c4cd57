// The quality recipe (bench/quality/recipe.json) and where its generated files live.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CompositeParams {
  subjectShare: number;
  minLongSide: number;
  /** The canvas's longer side at most (the cut-out scaled down to keep its share). */
  maxLongSide?: number;
  seed: number;
}

export interface Recipe {
  about: string;
  packages: { name: string; version: string; root: string }[];
  composite: CompositeParams & { split: string };
  smallSubjects: CompositeParams & { about: string };
  cutouts: string[];
  backgrounds: string[];
}

/** The composite sets: the main one, and one with small subjects (recipe.json `smallSubjects`). */
export type CompositeSet = 'main' | 'small';

/** A set's parameters, directory of composites and checksum file. */
export function compositeSet(recipe: Recipe, set: CompositeSet): { params: CompositeParams; dir: string; checksums: string } {
  if (set === 'small') {
    return { params: recipe.smallSubjects, dir: join(DATA_DIR, 'composites-small'), checksums: join(QUALITY_DIR, 'checksums-small.json') };
  }
  return { params: recipe.composite, dir: join(DATA_DIR, 'composites'), checksums: join(QUALITY_DIR, 'checksums.json') };
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
