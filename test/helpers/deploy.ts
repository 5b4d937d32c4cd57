// What the deployment files (Dockerfile, compose.yaml, deploy/kubernetes/) are checked against:
// the settings docs/configuration.md documents, and the runtime stage of the Dockerfile (its user,
// ports and environment), read from the files themselves.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

// Settings the deployment files set before their documentation lands: MATTE_TRUSTED_PROXIES is
// built by issue 36 (its row in docs/configuration.md comes with it; remove it from here then).
const PENDING_SETTINGS = ['MATTE_TRUSTED_PROXIES'];

/** Every variable with a row in docs/configuration.md, plus the pending ones above. */
export function documentedSettings(): Set<string> {
  const table = readFileSync(`${ROOT}docs/configuration.md`, 'utf8');
  return new Set([...[...table.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]!), ...PENDING_SETTINGS]);
}

export interface RuntimeStage {
  user: string;
  env: Record<string, string>;
  expose: string[];
  healthcheck: string;
}

/** The Dockerfile's last stage: USER, ENV (the `KEY=value \` form it uses), EXPOSE, HEALTHCHECK. */
export function dockerfileRuntime(): RuntimeStage {
  const text = readFileSync(`${ROOT}Dockerfile`, 'utf8').replace(/\\\n/g, ' ');
  const last = text.slice(text.lastIndexOf('\nFROM '));
  const instruction = (name: string) => [...last.matchAll(new RegExp(`^${name} (.*)$`, 'gm'))].map((m) => m[1]!.trim());
  const env: Record<string, string> = {};
  for (const line of instruction('ENV')) for (const [, key, value] of line.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) env[key!] = value!;
  return { user: instruction('USER')[0] ?? '', env, expose: instruction('EXPOSE').flatMap((l) => l.split(/\s+/)), healthcheck: instruction('HEALTHCHECK')[0] ?? '' };
}

/** The first of `paths` that exists, or undefined (tools the tests skip without). */
export function findTool(...paths: string[]): string | undefined {
  return paths.find((path) => existsSync(path));
}
