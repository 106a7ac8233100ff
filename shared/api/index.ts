export * from './errors.ts';
export * from './model-id.ts';
export * from './tiers.ts';
export * from './media.ts';
export * from './generations.ts';
export * from './catalog.ts';
export * from './uploads.ts';
export * from './usage.ts';
