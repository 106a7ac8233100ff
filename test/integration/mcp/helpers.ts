import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { ffprobePath } from '../../../shared/node/ffmpeg.ts';
import { until } from '../../support/until.ts';

export const CLIPDESK_BIN = fileURLToPath(new URL('../../../bin/clipdesk.js', import.meta.url));

/** The tools the issue names, exactly, sorted: written out here, not taken from the server. */
export const TOOL_NAMES = [
  'cancel_generation',
  'continue_shot',
  'download_media',
  'export_sequence',
  'generate_image',
  'generate_video',
  'get_generation',
  'list_models',
  'preview_route',
  'search_library',
];

/** What a `clipdesk` child sees: a home of its own (its download folder under it), no session bus. */
export function childEnv(home: string): Record<string, string> {
  return { PATH: process.env['PATH'] ?? '', HOME: home };
}

export interface ToolAnswer {
  isError: boolean;
  text: string;
  data: Record<string, unknown>;
}

/** Calls a tool; renders may take a while on a loaded machine, progress keeps the call alive. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onprogress?: (p: Progress) => void,
): Promise<ToolAnswer> {
  const res = await client.callTool({ name, arguments: args }, undefined, {
    // A render on a loaded machine can take minutes: the engine reports no progress meanwhile.
    timeout: 600_000,
    resetTimeoutOnProgress: true,
    ...(onprogress ? { onprogress } : {}),
  });
  const content = res.content as Array<{ type: string; text?: string }>;
  return {
    isError: res.isError === true,
    text: content.map((c) => c.text ?? '').join('\n'),
    data: (res.structuredContent ?? {}) as Record<string, unknown>,
  };
}

/** A tool's structured answer; a tool error fails the test with its text. */
export async function ok<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onprogress?: (p: Progress) => void,
): Promise<T> {
  const res = await call(client, name, args, onprogress);
  if (res.isError) throw new Error(`${name} failed: ${res.text}`);
  return res.data as T;
}

export async function durationOf(file: string): Promise<number> {
  const { stdout } = await promisify(execFile)(ffprobePath(), [
    '-v',
    'error',
    '-show_entries',
    'format=duration',
    '-of',
    'csv=p=0',
    file,
  ]);
  return Number(stdout.trim());
}

/** `clipdesk mcp --data DIR` over stdio, driven by the official SDK client; its stderr kept. */
export async function connectStdio(dataDir: string, home = dataDir): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLIPDESK_BIN, 'mcp', '--data', dataDir],
    env: childEnv(home),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
  const client = new Client({ name: 'clipdesk-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

/** `clipdesk mcp --http …` as a child; resolves once it printed its URL and secret. */
export async function startHttpServer(
  home: string,
  args: string[],
): Promise<{ child: ChildProcess; url: string; secret: string; stderr: () => string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [CLIPDESK_BIN, 'mcp', '--http', ...args], { env: childEnv(home) });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const found = await until(
    'the server to print its URL and secret',
    () => {
      if (child.exitCode !== null) throw new Error(`clipdesk mcp exited: ${stderr}`);
      const m = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)\nAuthorization: Bearer (\S+)\n/.exec(stderr);
      return m ? { url: m[1]!, secret: m[2]! } : undefined;
    },
    60_000,
  );
  return {
    child,
    ...found,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** No text an agent receives may hold one of our keys (`cdsk_<16 hex>_…`, server/auth/api-keys.ts). */
export const KEY_SHAPE = /cdsk_[0-9a-f]{16}_/;
