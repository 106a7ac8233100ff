import type { McpOptions } from '../mcp/index.ts';
import { UsageError } from './errors.ts';

/** `clipdesk mcp`'s flags → the server's options (docs/agents.md). */
export function mcpOptions(
  flags: Record<string, string | boolean | undefined>,
  data: string | undefined,
  keyStore?: string,
): McpOptions {
  if (flags['base-url'] !== undefined) throw new UsageError('mcp takes --profile NAME, not --base-url');
  const port = flags['port'];
  if (port !== undefined && !flags['http']) throw new UsageError('--port is for --http');
  if (port !== undefined && (typeof port !== 'string' || !/^\d{1,5}$/.test(port) || Number(port) > 65535))
    throw new UsageError('--port must be a port number (0-65535)');
  const max = flags['max-spend'];
  const maxSpend = typeof max === 'string' ? Number(max) : undefined;
  if (max !== undefined && !(maxSpend !== undefined && Number.isFinite(maxSpend) && maxSpend >= 0))
    throw new UsageError('--max-spend must be an amount in USD (0 or more)');
  return {
    ...(data ? { data } : {}),
    ...(typeof flags['profile'] === 'string' ? { profile: flags['profile'] } : {}),
    ...(flags['http'] ? { http: true } : {}),
    ...(typeof port === 'string' ? { port: Number(port) } : {}),
    ...(maxSpend !== undefined ? { maxSpend } : {}),
    ...(keyStore ? { keyStore } : {}),
  };
}
