// MATTE_MODELS_MIRROR: an internal server that holds the publishers' files under the same paths
// (air-gapped deployments). It replaces the origin of every publisher URL; a path prefix in the
// mirror's URL is kept in front of the publisher's path.
export function effectiveUrl(url: string, env: NodeJS.ProcessEnv = process.env): string {
  const mirror = env.MATTE_MODELS_MIRROR?.trim();
  if (!mirror) return url;
  let base: URL;
  try {
    base = new URL(mirror);
  } catch {
    throw new Error(`MATTE_MODELS_MIRROR=${mirror} is not a URL (e.g. https://models.internal/)`);
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new Error(`MATTE_MODELS_MIRROR=${mirror} must be an http(s) URL`);
  const publisher = new URL(url);
  return `${base.origin}${base.pathname.replace(/\/+$/, '')}${publisher.pathname}${publisher.search}`;
}
