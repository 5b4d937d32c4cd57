// Format negotiation on the GET routes (docs/api.md, "Extensions: responsive images"): `auto` reads
// the request's Accept header. AVIF where image/avif is accepted, else WebP where image/webp is, of
// those the server allows (MATTE_AUTO_FORMATS, config.autoFormats); else 'auto', the library's
// PNG-or-JPEG by the result's alpha, which every client shows. Only a type named outright counts:
// `image/*` and `*/*` promise nothing about AVIF or WebP (curl sends `*/*`, and so do old browsers).

/** The formats `auto` may choose beside PNG and JPEG, in the order it prefers them. */
export const NEGOTIATED_FORMATS = ['avif', 'webp'] as const;
export type NegotiatedFormat = (typeof NEGOTIATED_FORMATS)[number];

/** The longest Accept header read; a longer one is read up to there (browsers send about 150 characters). */
const MAX_ACCEPT_LENGTH = 2048;

/** The media types an Accept header accepts (q > 0), named outright, lower-cased, parameters other than q ignored. */
export function acceptedTypes(accept: string | undefined): Set<string> {
  const types = new Set<string>();
  if (!accept) return types;
  for (const range of accept.slice(0, MAX_ACCEPT_LENGTH).split(',')) {
    const [type, ...parameters] = range.split(';').map((p) => p.trim().toLowerCase());
    if (!type) continue;
    const q = parameters.find((p) => /^q\s*=/.test(p));
    const weight = q === undefined ? 1 : Number(q.slice(q.indexOf('=') + 1).trim());
    if (weight > 0) types.add(type);
  }
  return types;
}

/** The allowed formats a request with this Accept header takes, in the order `auto` prefers them: what its answer depends on (its ETag). */
export function negotiableFormats(accept: string | undefined, allowed: readonly NegotiatedFormat[]): NegotiatedFormat[] {
  const types = acceptedTypes(accept);
  return NEGOTIATED_FORMATS.filter((format) => allowed.includes(format) && types.has(`image/${format}`));
}

/** The format `auto` becomes for a request with this Accept header: 'avif', 'webp', or 'auto' (PNG or JPEG by alpha). */
export function negotiateFormat(accept: string | undefined, allowed: readonly NegotiatedFormat[]): NegotiatedFormat | 'auto' {
  return negotiableFormats(accept, allowed)[0] ?? 'auto';
}

/**
 * The format `auto` becomes for an input that may animate, its frames kept: WebP where the request
 * takes it, else GIF (AVIF, PNG and JPEG would keep the first frame alone).
 */
export function animatedFormat(negotiable: readonly NegotiatedFormat[]): 'webp' | 'gif' {
  return negotiable.includes('webp') ? 'webp' : 'gif';
}

/** Whether an input may be an animation, from its first bytes: a GIF, or a WebP whose VP8X header says so. */
export function mayAnimate(input: Uint8Array): boolean {
  const text = (from: number, to: number) => Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('latin1', from, to);
  if (input.length >= 6 && text(0, 4) === 'GIF8') return true;
  return input.length >= 21 && text(0, 4) === 'RIFF' && text(8, 16) === 'WEBPVP8X' && (input[20]! & 0x02) !== 0;
}
