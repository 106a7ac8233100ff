import { ipcContract } from '../../shared/ipc/contract.ts';
import { ipcError } from '../../electron/app/errors.ts';
import type { IpcHandlers } from '../../electron/app/types.ts';

export type PartialHandlers = { [D in keyof IpcHandlers]?: Partial<IpcHandlers[D]> };

/**
 * A complete handler map for a test that exercises a few routes: every route not given answers
 * `not_available`, so a test that reaches one by mistake says which.
 */
export function stubHandlers(given: PartialHandlers): IpcHandlers {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [domain, actions] of Object.entries(ipcContract)) {
    const provided: Record<string, unknown> = given[domain as keyof IpcHandlers] ?? {};
    out[domain] = {};
    for (const action of Object.keys(actions)) {
      out[domain][action] = Object.hasOwn(provided, action)
        ? provided[action]
        : () => {
            throw ipcError('not_available', `${domain}.${action} is not stubbed in this test`);
          };
    }
  }
  return out as IpcHandlers;
}
