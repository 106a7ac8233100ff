import { mkdirSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { defaultUserDataDir } from '../core/settings/index.ts';
import { createFileLogger } from '../../shared/node/logger.ts';
import { openBackend } from './backend.ts';
import { createSessionSpend, describeError } from './guardrails.ts';
import { startMcpHttp } from './http.ts';
import { createClipdeskMcpServer } from './server.ts';

/** `clipdesk mcp`'s options, parsed (the CLI's dispatcher does the parsing). */
export interface McpOptions {
  /** The data folder; default the user data folder the app uses. */
  data?: string;
  /** A profile's name or id; default the active one. */
  profile?: string;
  /** Streamable HTTP on loopback instead of stdio. */
  http?: boolean;
  /** With `http`: the port (default 0, any free one). */
  port?: number;
  /** USD this server's jobs may cost in all. */
  maxSpend?: number;
  /** `clipdesk --key-store keychain|file mcp`: where its own core keeps keys (default: as chosen before for the data folder). */
  keyStore?: string;
}

export interface McpIo {
  /** Never stdout: over stdio it carries the protocol. */
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

const VERSION = '0.1.0';

/**
 * Runs the MCP server until its client goes away (stdio: stdin ends) or the process is asked to
 * stop (SIGINT/SIGTERM); resolves with the exit code. See docs/agents.md.
 */
export async function runMcp(options: McpOptions, io: McpIo): Promise<number> {
  const dataDir = options.data ?? defaultUserDataDir(io.env);
  mkdirSync(dataDir, { recursive: true });
  const log = createFileLogger({ dataDir, program: 'mcp' });
  const logger = log.logger;
  let backend;
  try {
    backend = await openBackend({
      dataDir,
      version: VERSION,
      logger,
      ...(options.profile === undefined ? {} : { profile: options.profile }),
      ...(options.keyStore === undefined ? {} : { keyStore: options.keyStore }),
    });
  } catch (error) {
    const { code, message } = describeError(error);
    io.stderr(`clipdesk mcp: ${code}: ${message}\n`);
    await log.close();
    return code === 'not_found' || code === 'conflict' ? 2 : 1;
  }
  const spend = createSessionSpend(options.maxSpend ?? null);
  const newServer = () => createClipdeskMcpServer(backend, spend, VERSION);
  let stopped!: () => void;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  const onSignal = (): void => stopped();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let close: () => Promise<void>;
  try {
    if (options.http) {
      const host = await startMcpHttp({
        port: options.port ?? 0,
        ...(io.env['CLIPDESK_MCP_TOKEN'] ? { secret: io.env['CLIPDESK_MCP_TOKEN'] } : {}),
        newServer,
        onError: (error) => logger.error({ err: error }, 'an MCP request failed'),
      });
      // The secret is printed here on purpose: it is how the user's MCP client gets in.
      io.stderr(
        `Clipdesk MCP server (${backend.via === 'app' ? 'through the running app' : 'its own core'}) at ${host.url}\n` +
          `Authorization: Bearer ${host.secret}\n`,
      );
      close = () => host.close();
    } else {
      const server = newServer();
      const transport = new StdioServerTransport();
      transport.onclose = () => stopped();
      process.stdin.once('end', () => stopped());
      await server.connect(transport);
      io.stderr(
        `Clipdesk MCP server on stdio (${backend.via === 'app' ? 'through the running app' : 'its own core'})\n`,
      );
      close = () => server.close();
    }
  } catch (error) {
    const { code, message } = describeError(error);
    io.stderr(`clipdesk mcp: ${code}: ${message}\n`);
    await backend.close();
    await log.close();
    return 1;
  }
  await done;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  await close().catch(() => undefined);
  await backend.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the core failed'));
  await log.close();
  return 0;
}
