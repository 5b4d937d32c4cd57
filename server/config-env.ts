// Reading one environment variable: present/integer/flag/httpUrl, each throwing a ConfigError whose
// message names the variable. Shared by server/config.ts and server/config-scale.ts.

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

export function present(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const text = present(env, name);
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) throw new ConfigError(`${name}=${JSON.stringify(text)} is not a whole number (expected ${min}..${max})`);
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name}=${text} is out of range (expected ${min}..${max})`);
  }
  return value;
}

export function flag(env: Env, name: string): boolean {
  const text = present(env, name);
  if (text === undefined) return false;
  const lower = text.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(lower)) return true;
  if (['0', 'false', 'no', 'off'].includes(lower)) return false;
  throw new ConfigError(`${name}=${JSON.stringify(text)} is not a boolean (expected 1 or 0)`);
}

/** An absolute http(s) URL without a trailing slash, or undefined; `example` completes the message. */
export function httpUrl(env: Env, name: string, example: string): URL | undefined {
  const text = present(env, name);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${name}=${JSON.stringify(text)} is not an absolute URL (expected e.g. ${example})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name}=${JSON.stringify(text)} must be an http: or https: URL`);
  return url;
}
