import type { Profiles } from '../../core/profiles/index.ts';
import type { EventBus } from '../events.ts';
import type { DomainHandlers } from '../types.ts';

export function profilesHandlers(profiles: Profiles, bus: EventBus): DomainHandlers<'profiles'> {
  const changed = <T>(value: T): T => {
    bus.publish({ type: 'profiles.changed' });
    return value;
  };
  return {
    list: () => profiles.list(),
    create: async (input) => changed(await profiles.create(input)),
    update: async (input) => changed(await profiles.update(input)),
    remove: async ({ id }) => changed(await profiles.remove(id)),
    activate: async ({ id }) => changed(await profiles.activate(id)),
    keyStatus: ({ id }) => profiles.keyStatus(id),
    setKey: async ({ id, key }) => changed(await profiles.setKey(id, key)),
    removeKey: async ({ id }) => changed(await profiles.removeKey(id)),
    setBudget: async ({ id, daily, monthly }) => changed(await profiles.setBudget(id, { daily, monthly })),
  };
}
