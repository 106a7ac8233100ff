import path from 'node:path';
import { ORPCError } from '@orpc/client';
import { describe, expect, it } from 'vitest';
import { mcpOptions } from '../../../../electron/cli/mcp.ts';
import {
  createSessionSpend,
  describeError,
  insideRoots,
  pathInside,
  toolError,
} from '../../../../electron/mcp/guardrails.ts';

const roots = [path.resolve('/home/u/Videos/Clipdesk'), path.resolve('/home/u/.config/Clipdesk/media')];

describe('MCP guardrails', () => {
  it('lets through paths inside the library and download folders only', () => {
    expect(insideRoots('/home/u/Videos/Clipdesk/2026-11/a.mp4', roots)).toBe(
      path.resolve('/home/u/Videos/Clipdesk/2026-11/a.mp4'),
    );
    expect(() => insideRoots('/home/u/Videos/Clipdesk/../secret.txt', roots)).toThrow(/outside the library/);
    expect(() => insideRoots('/home/u/Videos/ClipdeskOther/a.mp4', roots)).toThrow(/outside the library/);
    expect(pathInside('/etc/passwd', roots)).toBeNull();
  });

  it('--max-spend: reaching the cap exactly is allowed, passing it is refused naming it', () => {
    const spend = createSessionSpend(0.1);
    spend.check(0.06);
    spend.add(0.06);
    spend.check(0.04);
    spend.add(0.04);
    expect(() => spend.check(0.001)).toThrow("Over this session's --max-spend cap ($0.101 of $0.100)");
    const unlimited = createSessionSpend(null);
    expect(() => unlimited.check(1000)).not.toThrow();
  });

  it('an error is a tool error with the service code and message, keys scrubbed', () => {
    const key = `cdsk_0123456789abcdef_${'A'.repeat(43)}`;
    const error = new ORPCError('authentication_error', { message: `Invalid key ${key} (Bearer ${key})` });
    const described = describeError(error);
    expect(described.code).toBe('authentication_error');
    expect(described.message).not.toContain(key);
    const result = toolError(error);
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result)).not.toContain('0123456789abcdef_A');
    expect(describeError(new Error('boom'))).toEqual({ code: 'internal_error', message: 'boom' });
  });
});

describe('clipdesk mcp flags', () => {
  it('parses them, and refuses what makes no sense', () => {
    expect(mcpOptions({ http: true, port: '8765', 'max-spend': '2.5', profile: 'Work' }, '/d')).toEqual({
      data: '/d',
      http: true,
      port: 8765,
      maxSpend: 2.5,
      profile: 'Work',
    });
    // `clipdesk --key-store file mcp`: its own core keeps keys where the rest of the CLI does.
    expect(mcpOptions({}, '/d', 'file')).toEqual({ data: '/d', keyStore: 'file' });
    expect(() => mcpOptions({ port: '8765' }, undefined)).toThrow('--port is for --http');
    expect(() => mcpOptions({ http: true, port: '99999' }, undefined)).toThrow(/--port must be/);
    expect(() => mcpOptions({ 'max-spend': '-1' }, undefined)).toThrow(/--max-spend must be/);
    expect(() => mcpOptions({ 'base-url': 'http://x' }, undefined)).toThrow(/--profile NAME, not --base-url/);
  });
});
