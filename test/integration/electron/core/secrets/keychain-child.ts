// Runs one keychain operation in its own process and prints the result as one JSON line, so the
// test can prove that a key survives a process restart.
import { createSecretStore } from '../../../../../electron/core/secrets/index.ts';

const [op = 'status', account = 'test', value = ''] = process.argv.slice(2);
const store = createSecretStore({ service: 'Clipdesk-test' });
try {
  let result: unknown;
  if (op === 'status') result = await store.status();
  else if (op === 'set') result = await store.set(account, value);
  else if (op === 'get') result = await store.get(account);
  else if (op === 'delete') result = await store.delete(account);
  else if (op === 'info') result = await store.info(account);
  console.log(JSON.stringify({ op, ok: true, result: result ?? null }));
} catch (error) {
  console.log(
    JSON.stringify({
      op,
      ok: false,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    }),
  );
}
