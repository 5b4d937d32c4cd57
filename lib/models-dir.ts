// Where fetched models live. An installed package must not write inside node_modules (it may be
// read-only, and `npm ci` wipes it), so the default is the user's cache directory, the same for a
// git checkout and an installed package: $XDG_CACHE_HOME/matte/models, else ~/.cache/matte/models.
// MATTE_MODELS_DIR overrides it (a shared or read-only location prepared ahead, a container volume).
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export function modelsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MATTE_MODELS_DIR) return env.MATTE_MODELS_DIR;
  // The XDG base-directory rule: a relative XDG_CACHE_HOME is invalid and ignored.
  const cache = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir() || tmpdir(), '.cache');
  return join(cache, 'matte', 'models');
}
