export { defaultUserDataDir as defaultDataDir } from '../core/profiles/index.ts';

export const PRODUCT_NAME = 'Clipdesk';
