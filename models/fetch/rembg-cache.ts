// rembg's model cache: a user who ran rembg has the publisher's files already, verified by the
// same md5 (rembg's sessions/base.py: U2NET_HOME, else $XDG_DATA_HOME/.u2net, else ~/.u2net; each
// file named after rembg's model name, which is the registry's).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export function rembgCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const expand = (path: string) => (path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path);
  if (env.U2NET_HOME) return expand(env.U2NET_HOME);
  return join(expand(env.XDG_DATA_HOME || '~'), '.u2net');
}

/** rembg's copy of the model, if it has one. */
export function rembgCachedFile(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = join(rembgCacheDir(env), `${name}.onnx`);
  return existsSync(path) ? path : undefined;
}
