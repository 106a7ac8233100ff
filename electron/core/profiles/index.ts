export { createProfiles, defaultSettings, keyBackendOf, LOCAL_PROFILE_ID, ProfileError } from './profiles.ts';
export type { Profiles, ProfilesOptions } from './profiles.ts';
