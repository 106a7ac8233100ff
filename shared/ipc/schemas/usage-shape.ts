import { UsageResponse } from '../../api/usage.ts';

/** `GET /usage`'s `result`: tier, limits and usage. */
export const Usage = UsageResponse.shape.result;
