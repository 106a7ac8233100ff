import type { EventBus } from '../events.ts';
import type { SettingsStore } from '../settings.ts';
import type { DomainHandlers } from '../types.ts';

export function settingsHandlers(store: SettingsStore, bus: EventBus): DomainHandlers<'settings'> {
  return {
    get: () => store.get(),
    update: (patch) => {
      const next = store.update(patch);
      bus.publish({ type: 'settings.changed' });
      return next;
    },
  };
}
