// CI: lists the tools of `clipdesk mcp` with the MCP Inspector's CLI mode, on a fresh data folder
// and home of its own, and fails unless exactly the documented tools are there and the Inspector's
// schema portability check finds nothing (no error, no warning; docs/agents.md).
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
  // --strict: each portability finding in full (the tool, the schema path, the issue) on stderr.
  const res = spawnSync(inspector, ['--cli', ...server, '--method', 'tools/list', '--strict'], {
    env: { PATH: process.env['PATH'] ?? '', HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (res.status !== 0) {
    console.error(res.stdout, res.stderr);
    throw new Error(`the Inspector exited with ${res.status ?? res.signal}`);
  }
  // The exit code stays 0 on portability findings: they are read from stderr.
  const findings = res.stderr.split(/\n(?=Warning: |Error: )/).filter((part) => /^(Warning|Error): tool /.test(part));
  const summary = /Schema portability: (\d+) errors?, (\d+) warnings?/.exec(res.stderr);
  if (findings.length > 0 || (summary && (summary[1] !== '0' || summary[2] !== '0'))) {
    console.error(findings.join('\n') || res.stderr);
    throw new Error(`the Inspector's schema portability check: ${summary?.[0] ?? `${findings.length} finding(s)`}`);
  }
  const { tools } = JSON.parse(res.stdout) as { tools: Array<{ name: string }> };
  const names = tools.map((t) => t.name).sort();
  if (JSON.stringify(names) !== JSON.stringify(EXPECTED))
    throw new Error(`clipdesk mcp lists ${names.join(', ')}; expected ${EXPECTED.join(', ')}`);
  console.log(
    `MCP Inspector: clipdesk mcp lists its ${names.length} tools, with portable schemas: ${names.join(', ')}`,
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
