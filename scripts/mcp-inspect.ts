// CI: lists the tools of `clipdesk mcp` with the MCP Inspector's CLI mode, on a fresh data folder
// and home of its own, and fails unless exactly the documented tools are there (docs/agents.md).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOL_NAMES } from '../electron/mcp/schemas.ts';

const EXPECTED: readonly string[] = TOOL_NAMES;

const root = fileURLToPath(new URL('..', import.meta.url));
const home = mkdtempSync(path.join(tmpdir(), 'clipdesk-mcp-inspect-'));
try {
  const inspector = path.join(root, 'node_modules', '.bin', 'mcp-inspector');
  const server = [process.execPath, path.join(root, 'bin', 'clipdesk.js'), 'mcp', '--data', path.join(home, 'data')];
  const res = spawnSync(inspector, ['--cli', ...server, '--method', 'tools/list'], {
    env: { PATH: process.env['PATH'] ?? '', HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (res.status !== 0) {
    console.error(res.stdout, res.stderr);
    throw new Error(`the Inspector exited with ${res.status ?? res.signal}`);
  }
  const { tools } = JSON.parse(res.stdout) as { tools: Array<{ name: string }> };
  const names = tools.map((t) => t.name).sort();
  if (JSON.stringify(names) !== JSON.stringify(EXPECTED))
    throw new Error(`clipdesk mcp lists ${names.join(', ')}; expected ${EXPECTED.join(', ')}`);
  console.log(`MCP Inspector: clipdesk mcp lists its ${names.length} tools: ${names.join(', ')}`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
