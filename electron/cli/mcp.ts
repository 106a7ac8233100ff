import { fileURLToPath } from 'node:url';
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

/** The MCP clients `clipdesk mcp --print-config` writes a configuration for (docs/agents.md). */
export const MCP_CLIENTS = ['claude', 'cursor', 'vscode'] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];

/** The bin that starts the CLI, by its absolute path (the config must not depend on PATH or cwd). */
export const CLIPDESK_BIN_PATH = fileURLToPath(new URL('../../bin/clipdesk.js', import.meta.url));

/**
 * A configuration an MCP client starts `clipdesk mcp` with, from any folder: the absolute path of
 * the Node running this command (one that runs the TypeScript sources) and of the bin. A bare
 * `"command": "clipdesk"` needs a global install on the client's PATH, which a clone lacks.
 */
export function mcpClientConfig(
  client: string,
  flags: Record<string, string | boolean | undefined>,
  data: string | undefined,
  paths: { node: string; bin: string } = { node: process.execPath, bin: CLIPDESK_BIN_PATH },
): Record<string, unknown> {
  if (!(MCP_CLIENTS as readonly string[]).includes(client))
    throw new UsageError(`--print-config must be one of ${MCP_CLIENTS.join(', ')}`);
  if (flags['http'] || flags['port'] !== undefined)
    throw new UsageError('--print-config writes a stdio configuration; --http takes a URL instead (docs/agents.md)');
  // The flags are checked as the server would check them, so the printed command starts.
  const options = mcpOptions(flags, data);
  const args = [
    paths.bin,
    'mcp',
    ...(options.data ? ['--data', options.data] : []),
    ...(options.profile !== undefined ? ['--profile', options.profile] : []),
    ...(options.maxSpend !== undefined ? ['--max-spend', String(options.maxSpend)] : []),
  ];
  const server = { command: paths.node, args };
  if (client === 'vscode') return { servers: { clipdesk: { type: 'stdio', ...server } } };
  return { mcpServers: { clipdesk: server } };
}
