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

/** The format `auto` becomes for a request with this Accept header: 'avif', 'webp', or 'auto' (PNG or JPEG by alpha). */
export function negotiateFormat(accept: string | undefined, allowed: readonly NegotiatedFormat[]): NegotiatedFormat | 'auto' {
  const types = acceptedTypes(accept);
  for (const format of NEGOTIATED_FORMATS) if (allowed.includes(format) && types.has(`image/${format}`)) return format;
  return 'auto';
}
