/**
 * The environment variables the Local engine reads that the app hands it from its own
 * environment (docs/architecture.md, "The Local engine's process"): the AI providers' keys and
 * where fal's model listing is read. Here, below both, so the app names them without importing the
 * service's internals; the service's own modules re-export them where they read them.
 */
export const PROVIDER_KEY_ENV_NAMES = {
  fal: 'FAL_KEY',
  replicate: 'REPLICATE_API_TOKEN',
  google: 'GEMINI_API_KEY',
  runway: 'RUNWAYML_API_SECRET',
  luma: 'LUMAAI_API_KEY',
  openai: 'OPENAI_API_KEY',
} as const;

/** Where the catalog sync reads fal's model listing, when not fal's own address. */
export const FAL_PLATFORM_URL_ENV = 'CLIPDESK_FAL_PLATFORM_URL';
