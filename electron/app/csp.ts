/**
 * Content Security Policy of the renderer document, in both modes. No `unsafe-eval`, no inline
 * script; media may come from the service (any http(s) origin: a remote profile's CDN) and from
 * local files through the media protocol.
 */
export function rendererCsp(mediaSources: readonly string[]): string {
  const media = ["'self'", 'blob:', 'data:', 'http:', 'https:', ...mediaSources].join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src ${media}`,
    `media-src ${media}`,
    "connect-src 'self'",
    "font-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "frame-src 'none'",
    "worker-src 'self' blob:",
  ].join('; ');
}
