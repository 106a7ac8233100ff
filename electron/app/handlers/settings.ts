import type { Profiles } from '../../core/profiles/index.ts';
import type { EventBus } from '../events.ts';
import type { DomainHandlers } from '../types.ts';

/** Settings live beside the profiles (core/profiles), in the one settings file. */
export function settingsHandlers(profiles: Profiles, bus: EventBus): DomainHandlers<'settings'> {
  return {
    get: () => profiles.settings(),
    update: (patch) => {
      const next = profiles.updateSettings(patch);
      bus.publish({ type: 'settings.changed' });
      return next;
    },
  };
}
