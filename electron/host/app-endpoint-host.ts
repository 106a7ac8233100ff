import { publishAppEndpoint } from '../app/app-endpoint.ts';
import { startHost, type Host, type HostOptions } from './server.ts';

/**
 * The loopback host of a running app, announced in `<data>/app-endpoint.json` so that
 * `clipdesk mcp` on the same data folder goes through this app's core instead of running a second
 * one on the same files (docs/agents.md). Browser mode passes its renderer and media; the desktop
 * app passes the router alone, so its endpoint serves the IPC contract and nothing else. Either
 * way it is the same host: loopback only, the per-launch secret, Host and Origin checked
 * (docs/security.md). Closing it removes the file first, then stops the host.
 */
export async function startAppEndpoint(dataDir: string, options: HostOptions): Promise<Host> {
  const host = await startHost(options);
  let unpublish: () => void;
  try {
    unpublish = publishAppEndpoint(dataDir, {
      origin: host.origin,
      port: host.port,
      secret: host.secret,
      pid: process.pid,
    });
  } catch (error) {
    await host.close();
    throw error;
  }
  return {
    port: host.port,
    secret: host.secret,
    url: host.url,
    origin: host.origin,
    async close() {
      unpublish();
      await host.close();
    },
  };
}
