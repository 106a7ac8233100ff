// Runs one provider-key operation in its own process and prints the result as one JSON line, so
// the test can prove that a key survives a process restart and never leaves the keychain.
import { createProviderKeyStore } from '../../../../../electron/core/providers/index.ts';
import { createSecretStore } from '../../../../../electron/core/secrets/index.ts';
import type { ProviderKeyId } from '../../../../../shared/ipc/index.ts';

const [op = 'info', id = 'fal', value = '', engineDir = '/tmp/clipdesk-engine-a'] = process.argv.slice(2);
const secrets = createSecretStore({ service: 'Clipdesk-test' });
const keys = createProviderKeyStore(secrets, engineDir);
const pid = id as ProviderKeyId;
try {
  let result: unknown;
  if (op === 'set') result = await keys.set(pid, value);
  else if (op === 'get') result = await keys.get(pid);
  else if (op === 'remove') result = await keys.remove(pid);
  else if (op === 'info') result = await keys.info(pid);
  else if (op === 'all') result = await keys.all(['fal', 'replicate', 'google', 'runway', 'luma', 'openai']);
  console.log(JSON.stringify({ op, ok: true, result: result ?? null }));
} catch (error) {
  const e = error as { name?: string; message?: string; code?: string };
  console.log(JSON.stringify({ op, ok: false, error: `${e.name}: ${e.message}`, code: e.code }));
}
