import { createInterface } from 'node:readline';
import { PROVIDERS } from '../providers/model-definitions.ts';
import {
  baseUrlEnvName,
  isRemoteProviderId,
  keyFilePath,
  last4,
  PROVIDER_ENV_KEYS,
  ProviderSettings,
  readKeyFile,
  storeKey,
  validateProviderKey,
} from '../providers/provider-keys.ts';
import type { RemoteProviderId } from '../providers/remote/contract.ts';
import { REMOTE_PROVIDER_IDS } from '../providers/remote/contract.ts';
import type { Io, LocationValues } from './commands.ts';
import { resolveLocations } from './locations.ts';
import { UsageError } from './usage-error.ts';

/**
 * `clipdesk-service providers list | set-key NAME | remove-key NAME`: the provider keys of a
 * standalone service. Keys are read from standard input, never argv (argv is visible to every
 * user of the machine and kept in shell history), stored owner-only in the data directory, and
 * shown by their last 4 characters only. A running service reads the key file when it starts.
 */

function providerName(name: string | undefined, command: string): RemoteProviderId {
  if (name === undefined) throw new UsageError(`providers ${command} takes one NAME`);
  const id = name.trim().toLowerCase();
  if (!isRemoteProviderId(id))
    throw new UsageError(`unknown provider '${name}'; providers with keys: ${REMOTE_PROVIDER_IDS.join(', ')}`);
  return id;
}

export async function providersSetKey(name: string | undefined, values: LocationValues, io: Io): Promise<number> {
  const { dataDir } = resolveLocations(values);
  const id = providerName(name, 'set-key');
  const key = await readKey(io, id);
  if (key === '') {
    io.err(
      `clipdesk-service: no key on standard input. Pipe the key in, for example:\n` +
        `  printf '%s' "$${PROVIDER_ENV_KEYS[id]}" | clipdesk-service providers set-key ${id}`,
    );
    return 1;
  }
  validateProviderKey(id, key);
  await storeKey(dataDir, id, key);
  io.out(
    `stored the ${id} key …${last4(key)} in ${keyFilePath(dataDir)} (owner-only); it wins over ${PROVIDER_ENV_KEYS[id]}. ` +
      'A running service on this data directory uses it within seconds, without a restart.',
  );
  return 0;
}

export async function providersRemoveKey(name: string | undefined, values: LocationValues, io: Io): Promise<number> {
  const { dataDir } = resolveLocations(values);
  const id = providerName(name, 'remove-key');
  const had = await storeKey(dataDir, id, null);
  io.out(had ? `removed the stored ${id} key` : `no ${id} key was stored in ${keyFilePath(dataDir)}`);
  const envName = PROVIDER_ENV_KEYS[id];
  if (process.env[envName])
    io.err(`note: ${envName} is set in this environment; a service started with it uses that key`);
  return 0;
}

export async function providersList(values: LocationValues & { json?: boolean }, io: Io): Promise<number> {
  const { dataDir } = resolveLocations(values);
  const json = values.json === true;
  const settings = new ProviderSettings({ env: process.env, fileKeys: await readKeyFile(dataDir) });
  const rows = REMOTE_PROVIDER_IDS.map((id) => {
    const key = settings.key(id);
    const baseUrl = settings.baseUrl(id);
    return {
      id,
      configured: key !== undefined,
      ...(key ? { last4: last4(key.key), source: key.source } : {}),
      envKey: PROVIDER_ENV_KEYS[id],
      ...(baseUrl !== undefined ? { baseUrl, baseUrlFrom: baseUrlEnvName(id) } : {}),
    };
  });
  if (json) {
    io.out(JSON.stringify({ remote: rows, local: PROVIDERS.map((p) => ({ id: p.id, name: p.name })) }));
    return 0;
  }
  for (const r of rows) {
    const key = r.configured
      ? `configured\t…${r.last4 ?? ''}\tfrom ${r.source === 'file' ? 'the key file' : r.envKey}`
      : `not configured\t-\tset ${r.envKey} or run providers set-key ${r.id}`;
    io.out(`${r.id}\t${key}${r.baseUrl ? `\tbase ${r.baseUrl}` : ''}`);
  }
  for (const p of PROVIDERS) io.out(`${p.id}\tprocedural, no key needed\t-\t${p.name}`);
  return 0;
}

/**
 * The key from standard input: all of it when piped (one trailing line break dropped, as `echo`
 * adds one), or one line typed or pasted at a terminal.
 */
async function readKey(io: Io, id: RemoteProviderId): Promise<string> {
  const input = io.stdin;
  if (!input) return '';
  if (input.isTTY) {
    io.err(`Paste the ${id} key and press Enter:`);
    const lines = createInterface({ input, terminal: false });
    try {
      for await (const line of lines) return line.trim();
      return '';
    } finally {
      lines.close();
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
