export { defaultUserDataDir as defaultDataDir } from '../core/settings/index.ts';

export const PRODUCT_NAME = 'Clipdesk';
