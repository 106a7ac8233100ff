import { ORPCError } from '@orpc/client';

/** The IPC error code a call fails with, or 'ok' when it succeeds; any other failure is rethrown. */
export async function errorCode(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ORPCError) return String(error.code);
    throw error;
  }
  return 'ok';
}
