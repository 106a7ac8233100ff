// Keys on a machine without an OS keychain (no session bus, as on a headless Linux box): each
// piece of advice the CLI prints is run exactly as printed, and the keys reach the built-in engine
// (docs/security.md, "Keys without an OS keychain").
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.ts';

interface Report {
  ok: boolean;
  checks: Array<{ name: string; status: 'ok' | 'warn' | 'fail'; detail: string }>;
}

const FAL_KEY = 'fal-test-key-0001:abcdef1234';
const REPLICATE_KEY = 'r8_testkey_plain_5678';
const PASSPHRASE = 'correct horse battery staple';

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'clipdesk-keys-'));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

const data = (name: string): string => join(home, name);
const check = (stdout: string, name: string) => (JSON.parse(stdout) as Report).checks.find((c) => c.name === name);

describe('keys without an OS keychain', () => {
  it('set-key says why it cannot store the key and what works instead; following it stores the key encrypted', async () => {
    const refused = await runCli(home, ['--data', data('a'), 'providers', 'set-key', 'fal'], {}, FAL_KEY);
    expect(refused.code).toBe(1);
    // The advice names the key file (flag and variable), the passphrase and the environment variables.
    expect(refused.stderr).toContain('set CLIPDESK_KEY_STORE=file or pass --key-store file');
    expect(refused.stderr).toContain('npm start -- --key-store file; clipdesk --key-store file');
    expect(refused.stderr).toContain('CLIPDESK_KEY_PASSPHRASE');
    expect(refused.stderr).toContain('FAL_KEY');
    expect(refused.stderr).toContain('CLIPDESK_API_KEY');
    expect(refused.stderr).not.toContain(FAL_KEY);

    // As printed: --key-store file, with CLIPDESK_KEY_PASSPHRASE set.
    const env = { CLIPDESK_KEY_PASSPHRASE: PASSPHRASE };
    const stored = await runCli(
      home,
      ['--data', data('a'), '--key-store', 'file', 'providers', 'set-key', 'fal'],
      env,
      `${FAL_KEY}\n`,
    );
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stderr).toContain('Stored the fal key ending in 1234 for the built-in engine in the key file');
    expect(stored.stderr).toContain('encrypted with your passphrase');
    const file = join(data('a'), 'keys.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(FAL_KEY);
    expect(JSON.parse(text)).toMatchObject({ kdf: { name: 'scrypt' } });

    // The variable does what the flag does; the engine gets the key and doctor says where it is from.
    const doctor = await runCli(home, ['--data', data('a'), 'doctor', '--json'], {
      ...env,
      CLIPDESK_KEY_STORE: 'file',
    });
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(check(doctor.stdout, 'keychain')).toMatchObject({ status: 'ok' });
    expect(check(doctor.stdout, 'keychain')?.detail).toContain('encrypted with your passphrase');
    expect(check(doctor.stdout, 'provider keys')?.detail).toBe('fal from key file');
    expect(doctor.stdout + doctor.stderr).not.toContain(FAL_KEY);

    // A wrong passphrase stores nothing and says which variable to fix. (Doctor's engine filed its
    // own key beside fal's: the file as it is now is what must stay.)
    const before = await readFile(file, 'utf8');
    const wrong = await runCli(
      home,
      ['--data', data('a'), '--key-store', 'file', 'providers', 'set-key', 'replicate'],
      { CLIPDESK_KEY_PASSPHRASE: 'not it' },
      REPLICATE_KEY,
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('the passphrase does not open the key file');
    expect(wrong.stderr).toContain('Set CLIPDESK_KEY_PASSPHRASE');
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  it('without a passphrase the key is kept plainly, with a warning on set-key and in doctor', async () => {
    const stored = await runCli(
      home,
      ['--data', data('b'), '--key-store', 'file', 'providers', 'set-key', 'replicate'],
      {},
      REPLICATE_KEY,
    );
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stderr).toMatch(/Warning: API keys are kept in plain text in .*keys\.json/);
    expect((await stat(join(data('b'), 'keys.json'))).mode & 0o777).toBe(0o600);

    const doctor = await runCli(home, ['--data', data('b'), '--key-store', 'file', 'doctor', '--json']);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(check(doctor.stdout, 'keychain')).toMatchObject({ status: 'warn' });
    expect(check(doctor.stdout, 'keychain')?.detail).toContain('plain text');
    expect(check(doctor.stdout, 'provider keys')?.detail).toBe('replicate from key file');
  });

  it('the key store chosen is remembered for the data folder, until --key-store keychain', async () => {
    const env = { CLIPDESK_KEY_PASSPHRASE: PASSPHRASE };
    const stored = await runCli(
      home,
      ['--data', data('e'), '--key-store', 'file', 'providers', 'set-key', 'fal'],
      env,
      FAL_KEY,
    );
    expect(stored.code, stored.stderr).toBe(0);

    // A plain doctor: no flag, no CLIPDESK_KEY_STORE.
    const doctor = await runCli(home, ['--data', data('e'), 'doctor', '--json'], env);
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(check(doctor.stdout, 'keychain')?.detail).toContain('encrypted with your passphrase');
    expect(check(doctor.stdout, 'key store')?.detail).toContain('the key file, as chosen before for this data folder');
    expect(check(doctor.stdout, 'provider keys')?.detail).toBe('fal from key file');

    // Chosen otherwise: the keychain (none here), and that is remembered too.
    await runCli(home, ['--data', data('e'), '--key-store', 'keychain', 'doctor', '--json'], env);
    const back = await runCli(home, ['--data', data('e'), 'doctor', '--json'], env);
    expect(check(back.stdout, 'keychain')?.detail).toMatch(/^none: No OS keychain is available/);
    expect(check(back.stdout, 'key store')?.detail).toContain('the OS keychain, as chosen before');
  });

  it('a wrong or missing passphrase is said by doctor and by every command, with the variable to set', async () => {
    const stored = await runCli(
      home,
      ['--data', data('f'), '--key-store', 'file', 'providers', 'set-key', 'fal'],
      { CLIPDESK_KEY_PASSPHRASE: PASSPHRASE },
      FAL_KEY,
    );
    expect(stored.code, stored.stderr).toBe(0);

    // The key file named explicitly here: what is tested is the passphrase, not the remembered choice.
    const inFile = ['--data', data('f'), '--key-store', 'file'];
    const wrong = await runCli(home, [...inFile, 'doctor', '--json'], { CLIPDESK_KEY_PASSPHRASE: 'not it' });
    expect(wrong.code).toBe(1);
    expect(check(wrong.stdout, 'keychain')).toMatchObject({ status: 'fail' });
    expect(check(wrong.stdout, 'keychain')?.detail).toContain('the passphrase does not open the key file');
    expect(check(wrong.stdout, 'keychain')?.detail).toContain('Set CLIPDESK_KEY_PASSPHRASE');
    expect(check(wrong.stdout, 'keychain')?.detail).not.toContain('encrypted with your passphrase');
    expect(check(wrong.stdout, 'provider keys')).toMatchObject({ status: 'fail' });
    expect(check(wrong.stdout, 'provider keys')?.detail).toContain('the passphrase does not open the key file');

    const missing = await runCli(home, [...inFile, 'doctor', '--json']);
    expect(missing.code).toBe(1);
    expect(check(missing.stdout, 'keychain')?.detail).toContain('the passphrase is missing');
    expect(check(missing.stdout, 'keychain')?.detail).toContain('Set CLIPDESK_KEY_PASSPHRASE');
    expect(check(missing.stdout, 'keychain')?.detail).not.toContain('plain text');

    // A command that uses the keys says it too (on stderr; its own output is unchanged).
    const models = await runCli(home, [...inFile, 'providers', '--json'], {
      CLIPDESK_KEY_PASSPHRASE: 'not it',
    });
    expect(models.code, models.stderr).toBe(0);
    expect(models.stderr).toContain('the passphrase does not open the key file');
    expect(models.stderr).toContain('Set CLIPDESK_KEY_PASSPHRASE');
    expect(models.stdout + models.stderr).not.toContain(FAL_KEY);
  });

  it("the built-in engine honours the providers' variables, and doctor names the variable", async () => {
    const doctor = await runCli(home, ['--data', data('c'), 'doctor', '--json'], { FAL_KEY });
    expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
    expect(check(doctor.stdout, 'provider keys')?.detail).toBe('fal from environment (FAL_KEY)');
    expect(doctor.stdout + doctor.stderr).not.toContain(FAL_KEY);
  });

  it('refuses a key store that is not one (exit 2)', async () => {
    const res = await runCli(home, ['--data', data('d'), '--key-store', 'basic', 'doctor']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("--key-store (CLIPDESK_KEY_STORE) is keychain or file, not 'basic'");
  });
});
