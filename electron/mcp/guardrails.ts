import path from 'node:path';
import { ORPCError } from '@orpc/client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { formatUsd } from '../core/ledger/index.ts';
import { scrubSecrets } from '../../shared/node/logger.ts';

/**
 * What keeps an agent inside the lines (docs/agents.md): a spending cap for the server's run, paths
 * only inside the library and download folders, and every failure as a tool error that carries the
 * service's code and message with anything shaped like a key removed.
 */
export class ToolFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** `--max-spend USD`: what this server's jobs may cost in all, counted at submit by their routed price. */
export interface SessionSpend {
  /** Throws a `budget_exceeded` ToolFailure naming the cap when `price` would pass it. */
  check(price: number | null): void;
  add(price: number | null): void;
  readonly spent: number;
}

const micros = (usd: number): number => Math.round(usd * 1e6);

export function createSessionSpend(maxSpend: number | null): SessionSpend {
  let spent = 0;
  return {
    check(price) {
      if (maxSpend === null || price === null || price <= 0) return;
      if (micros(spent + price) > micros(maxSpend))
        throw new ToolFailure(
          'budget_exceeded',
          `Over this session's --max-spend cap (${formatUsd(spent + price)} of ${formatUsd(maxSpend)})`,
        );
    },
    add(price) {
      if (price !== null && price > 0) spent += price;
    },
    get spent() {
      return spent;
    },
  };
}

/** `file` when it lies inside one of `roots`, else a `forbidden` ToolFailure. */
export function insideRoots(file: string, roots: readonly string[]): string {
  const abs = path.resolve(file);
  const ok = roots.some((root) => {
    const rel = path.relative(root, abs);
    return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
  });
  if (!ok) throw new ToolFailure('forbidden', 'The file is outside the library and download folders');
  return abs;
}

/** `file` inside one of `roots`, else null: what a listing shows of a file that moved out of them. */
export function pathInside(file: string | null, roots: readonly string[]): string | null {
  if (file === null) return null;
  try {
    return insideRoots(file, roots);
  } catch {
    return null;
  }
}

/** The error's code and message as the service or the app gave them; keys scrubbed. */
export function describeError(error: unknown): { code: string; message: string } {
  if (error instanceof ToolFailure) return { code: error.code, message: scrubSecrets(error.message) };
  if (error instanceof ORPCError) {
    const code = typeof error.code === 'string' ? error.code : 'internal_error';
    return { code, message: scrubSecrets(error.message) };
  }
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return { code: typeof code === 'string' ? code : 'internal_error', message: scrubSecrets(message) };
}

export function toolError(error: unknown): CallToolResult {
  const { code, message } = describeError(error);
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message}` }] };
}
