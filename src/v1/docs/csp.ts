/**
 * The Content-Security-Policy of the interactive reference: the page may load its own scripts and
 * styles, show its own and inline (data:) images, and fetch from this service only. Swagger UI's
 * stylesheet draws its icons as data: images; it has no inline script and no web font. Nothing may
 * frame the page, and a form or <base> cannot send anything elsewhere.
 */
const DIRECTIVES: Record<string, string> = {
  'default-src': "'none'",
  'script-src': "'self'",
  'script-src-attr': "'none'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'base-uri': "'none'",
  'form-action': "'none'",
  'frame-ancestors': "'none'",
};

export const DOCS_CSP = Object.entries(DIRECTIVES)
  .map(([directive, sources]) => `${directive} ${sources}`)
  .join('; ');
