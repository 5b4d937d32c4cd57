// The address classifier of the URL-input guard (docs/api.md, "Input"), a pure function.
// An address may be fetched only when it is global unicast. Refused: loopback, private (RFC 1918),
// link-local, CGNAT, unique-local, multicast, unspecified, broadcast, reserved/documentation
// ranges, and every IPv6 form that embeds or tunnels an IPv4 address that would be refused
// (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64 64:ff9b::/96, 6to4); Teredo and
// local-use NAT64 (64:ff9b:1::/48) are refused outright. Ranges come from ipaddr.js.
import ipaddr from 'ipaddr.js';

export interface AddressVerdict {
  allowed: boolean;
  /** The range that decided, e.g. `loopback`, `private`, `ipv4Mapped>loopback`, `unicast`. */
  range: string;
}

const IPV6_GLOBAL = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function embeddedIpv4(bytes: number[], offset: number): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes.slice(offset, offset + 4));
}

function classifyV4(address: ipaddr.IPv4): AddressVerdict {
  const range = address.range();
  return { allowed: range === 'unicast', range };
}

function nested(prefix: string, inner: AddressVerdict): AddressVerdict {
  return { allowed: inner.allowed, range: `${prefix}>${inner.range}` };
}

function classifyV6(address: ipaddr.IPv6): AddressVerdict {
  const range = address.range();
  const bytes = address.toByteArray();
  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
      return nested(range, classifyV4(embeddedIpv4(bytes, 12)));
    case 'rfc6052': // NAT64
      if (address.match(NAT64_WELL_KNOWN)) return nested('nat64', classifyV4(embeddedIpv4(bytes, 12)));
      return { allowed: false, range: 'nat64LocalUse' };
    case '6to4': // 2002:aabb:ccdd::/48
      return nested('6to4', classifyV4(embeddedIpv4(bytes, 2)));
    case 'unicast':
      break;
    default: // unspecified, loopback, linkLocal, multicast, uniqueLocal, teredo, reserved, discard, ...
      return { allowed: false, range };
  }
  // ipaddr.js calls the rest "unicast"; only 2000::/3 is global. ::a.b.c.d (IPv4-compatible,
  // deprecated) and every other unassigned block fall here.
  if (bytes.slice(0, 12).every((b) => b === 0)) return nested('ipv4Compatible', { allowed: false, range: classifyV4(embeddedIpv4(bytes, 12)).range });
  if (!address.match(IPV6_GLOBAL)) return { allowed: false, range: 'notGlobal' };
  return { allowed: true, range: 'unicast' };
}

/**
 * Whether the URL fetcher may connect to `address` (an IPv4 or IPv6 literal, with or without
 * brackets or a zone). Anything that does not parse is refused.
 */
export function classifyAddress(address: string): AddressVerdict {
  let text = address.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (text.includes('%')) return { allowed: false, range: 'zoned' }; // fe80::1%eth0: link-local by nature
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return classifyV4(ipaddr.IPv4.parse(text));
  if (ipaddr.IPv6.isValid(text)) {
    // Canonicalised the way the URL parser and the OS read it first: ipaddr.js alone reads
    // ::a.b.c.d as IPv4-mapped, where it is IPv4-compatible (::7f00:1).
    let canonical = text;
    try {
      canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
    } catch {
      return { allowed: false, range: 'invalid' };
    }
    return classifyV6(ipaddr.IPv6.parse(canonical));
  }
  // Other IPv4 spellings (2130706433, 0x7f.1, 017700000001): classify what they mean.
  if (ipaddr.IPv4.isValid(text)) return classifyV4(ipaddr.IPv4.parse(text));
  return { allowed: false, range: 'invalid' };
}

export function isAllowedAddress(address: string): boolean {
  return classifyAddress(address).allowed;
}
