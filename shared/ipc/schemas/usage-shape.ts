/** `GET /usage`'s `result`: tier, limits and usage. */
export { Usage } from '../../api/usage.ts';
