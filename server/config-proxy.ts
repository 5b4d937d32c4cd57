// The proxies whose forwarding headers are believed (MATTE_TRUSTED_PROXIES; docs/deploy.md): its
// value follows Express's `trust proxy`, comma-separated addresses, CIDR ranges and the names
// loopback, linklocal and uniquelocal, or a whole number of hops. Read by loadConfig
// (server/config.ts); a bad value is a ConfigError. server/client-address.ts applies it.
import proxyaddr from 'proxy-addr';
import { ConfigError, present, type Env } from './config-env.js';

export const PROXY_VARIABLES = ['MATTE_TRUSTED_PROXIES'] as const;

/** The most trusted hops a forwarding header is followed through (more: the header is ignored). */
export const MAX_TRUSTED_HOPS = 32;

/** Addresses and ranges (proxy-addr's forms), or the number of proxies in front of the server. */
export type TrustedProxies = { addresses: string[] } | { hops: number };

export interface ProxyConfig {
  /** Undefined: no proxy is trusted, forwarding headers are never read. */
  trustedProxies?: TrustedProxies;
}

export function loadProxyConfig(env: Env): ProxyConfig {
  const text = present(env, 'MATTE_TRUSTED_PROXIES');
  if (text === undefined) return {};
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > MAX_TRUSTED_HOPS) throw new ConfigError(`MATTE_TRUSTED_PROXIES=${text}: at most ${MAX_TRUSTED_HOPS} hops`);
    return hops === 0 ? {} : { trustedProxies: { hops } };
  }
  const addresses = text.split(',').map((a) => a.trim()).filter((a) => a !== '');
  if (addresses.length === 0) throw new ConfigError(`MATTE_TRUSTED_PROXIES=${JSON.stringify(text)} names no address`);
  try {
    proxyaddr.compile(addresses);
  } catch (err) {
    throw new ConfigError(
      `MATTE_TRUSTED_PROXIES=${JSON.stringify(text)}: ${(err as Error).message} (expected addresses, CIDR ranges, loopback, linklocal or uniquelocal, comma-separated; or a number of hops)`,
    );
  }
  return { trustedProxies: { addresses } };
}
