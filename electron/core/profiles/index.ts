export { createProfiles, LOCAL_PROFILE_ID } from './profiles.ts';
export type { Profiles } from './profiles.ts';
