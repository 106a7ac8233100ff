import type { ContractProcedure, InferSchemaInput, InferSchemaOutput } from '@orpc/contract';
import type { IpcContract } from '../../shared/ipc/contract.ts';

/** Who is calling. Set by the binding, never by the caller. */
export interface IpcContext {
  transport: 'electron' | 'http';
}

/** What a handler receives besides its input: the binding's context and the call's abort signal. */
export interface HandlerContext extends IpcContext {
  signal: AbortSignal | undefined;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- matching oRPC's generic procedure shape */
type HandlerFor<P> =
  P extends ContractProcedure<infer I, infer O, any, any>
    ? (input: InferSchemaOutput<I>, ctx: HandlerContext) => Promise<InferSchemaInput<O>> | InferSchemaInput<O>
    : never;
/* eslint-enable @typescript-eslint/no-explicit-any */

/** One domain's handlers: a function for every action of the contract. */
export type DomainHandlers<D extends keyof IpcContract> = {
  [A in keyof IpcContract[D]]: HandlerFor<IpcContract[D][A]>;
};

/** The whole handler map. A missing or extra route is a compile error. */
export type IpcHandlers = { [D in keyof IpcContract]: DomainHandlers<D> };
