import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { McpBackend } from './backend.ts';
import type { SessionSpend } from './guardrails.ts';
import { registerResources } from './resources.ts';
import { registerTools } from './tools.ts';

/** One MCP server (one per connection over HTTP) on the shared backend and session spend. */
export function createClipdeskMcpServer(backend: McpBackend, spend: SessionSpend, version: string): McpServer {
  const server = new McpServer(
    { name: 'clipdesk', title: 'Clipdesk', version },
    {
      capabilities: { logging: {} },
      instructions:
        'Clipdesk makes videos and images across providers, within the user’s budgets, into a library that keeps them. ' +
        'Check prices with preview_route; chain shots with continue_shot; cut them with export_sequence.',
    },
  );
  registerTools(server, { backend, spend });
  registerResources(server, backend);
  return server;
}
