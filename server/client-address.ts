// The client's address, for the wrong-key throttle, the access log and any per-client rule: the
// connection's peer, or, when the peer is a trusted proxy (MATTE_TRUSTED_PROXIES), the address the
// forwarding headers name, found as Express's `trust proxy` finds it (proxy-addr): from the peer
// leftwards through X-Forwarded-For, or RFC 7239 Forwarded's for= when the request has no
// X-Forwarded-For, every trusted hop gives way to the address it names, and the first untrusted
// one is the client. Headers from an untrusted peer are never read.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import parseForwarded from 'forwarded-parse';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import proxyaddr from 'proxy-addr';
import { MAX_TRUSTED_HOPS, type TrustedProxies } from './config-proxy.js';

/** Whether the hop at `index` (0: the peer) with `address` is a trusted proxy. */
export type Trust = (address: string, index: number) => boolean;

export function compileTrust(trusted: TrustedProxies | undefined): Trust | undefined {
  if (!trusted) return undefined;
  if ('hops' in trusted) {
    const { hops } = trusted;
    return (_address, index) => index < hops;
  }
  return proxyaddr.compile(trusted.addresses);
}

/**
 * The addresses a request went through, nearest first: the peer, then what X-Forwarded-For names
 * (proxy-addr reads it right to left), or else what Forwarded's for= parameters name. A Forwarded
 * header that does not parse names nothing.
 */
function forwardingChain(req: IncomingMessage, peer: string): string[] {
  if (req.headers['x-forwarded-for'] !== undefined) return proxyaddr.all(req);
  let elements: Record<string, string>[];
  try {
    elements = parseForwarded(req.headers.forwarded ?? '');
  } catch {
    return [peer];
  }
  const chain = [peer];
  for (let i = elements.length - 1; i >= 0; i--) chain.push(forwardedFor(elements[i]!.for));
  return chain;
}

/** A for= value as an address: `[v6]:port` and `v4:port` lose brackets and port; `unknown`, `_hidden` stay as they are. */
function forwardedFor(value: string | undefined): string {
  if (value === undefined) return '';
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::\d{1,5})?$/.exec(value);
  if (bracketed) return bracketed[1]!;
  return /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(value)?.[1] ?? value;
}

/**
 * The client's address of `req`. A walk ends at an entry that is not an IP address (RFC 7239's
 * `unknown`, an obfuscated `_name`, garbage, an empty entry): the client is then the trusted hop
 * that named it. A chain of more than MAX_TRUSTED_HOPS trusted hops is ignored (the peer), so the
 * work is one pass over the header (which Node bounds) and at most MAX_TRUSTED_HOPS + 1 checks.
 */
export function clientAddress(req: IncomingMessage, trust: Trust | undefined): string {
  const peer = req.socket.remoteAddress ?? '';
  if (!trust || !peer || (req.headers['x-forwarded-for'] === undefined && req.headers.forwarded === undefined) || !trust(peer, 0)) return peer;
  const chain = forwardingChain(req, peer);
  let index = 0;
  while (index + 1 < chain.length) {
    if (index === MAX_TRUSTED_HOPS) return peer;
    const named = chain[index + 1]!;
    if (isIP(named) === 0) return chain[index]!;
    index++;
    if (!trust(named, index)) return named;
  }
  return chain[index]!;
}

/**
 * Sets ctx.ip to the client's address (the access log also writes the peer's). The first request
 * that carries a forwarding header from a peer that is not trusted is logged once, with the
 * setting to change, since behind an unconfigured proxy every client shares the proxy's address.
 */
export function clientAddresses(trusted: TrustedProxies | undefined, logger: Logger) {
  const trust = compileTrust(trusted);
  let told = false;
  return async (ctx: Context, next: Next) => {
    ctx.request.ip = clientAddress(ctx.req, trust);
    if (!told) {
      const header = ctx.req.headers['x-forwarded-for'] !== undefined ? 'X-Forwarded-For' : ctx.req.headers.forwarded !== undefined ? 'Forwarded' : undefined;
      const peer = ctx.req.socket.remoteAddress ?? '';
      if (header && !trust?.(peer, 0)) {
        told = true;
        logger.warn(
          { peer, header },
          `a request from ${peer} carries ${header}, ignored: that peer is not a trusted proxy. If matte runs behind a proxy, set MATTE_TRUSTED_PROXIES to its address or range (docs/deploy.md); this is said once`,
        );
      }
    }
    await next();
  };
}
