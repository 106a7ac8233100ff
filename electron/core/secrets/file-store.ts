import { createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCallback } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { CoreError } from '../errors.ts';

/**
 * The opt-in key file for machines without an OS keychain (docs/security.md, "Keys without an OS
 * keychain"), as VS Code's `--password-store=basic` is: one owner-only (0600) JSON file. With a
 * passphrase each key is sealed with AES-256-GCM under a key scrypt derives from it (salt per
 * file, nonce per key); without one the keys are kept plainly and every status line says so.
 */
export interface KeyFileOptions {
  file: string;
  /** null or '': keep keys plainly (the user declined a passphrase). */
  passphrase: string | null;
}

export interface KeyFile {
  readonly file: string;
  readonly encrypted: boolean;
  /** Whether the keys in the file can be read now, with this passphrase (read at each call). */
  check(): Promise<KeyFileCheck>;
  get(account: string): Promise<string | null>;
  set(account: string, secret: string): Promise<void>;
  delete(account: string): Promise<boolean>;
}

/**
 * What the file is now: `plain` (no passphrase, nothing sealed), `encrypted` (the passphrase opens
 * its keys, or none is sealed yet), or why its keys cannot be read.
 */
export type KeyFileCheck =
  | { state: 'plain' }
  | { state: 'encrypted' }
  | { state: 'passphrase-missing' | 'passphrase-wrong' | 'unreadable'; message: string };

/** The fix for a passphrase that cannot open the file, as printed everywhere it is said. */
const PASSPHRASE_FIX =
  'Set CLIPDESK_KEY_PASSPHRASE to the passphrase the keys were stored with ' +
  '(or, if it is lost, move that file away and store the keys again).';

export function wrongPassphraseMessage(file: string): string {
  return `Keys cannot be read: the passphrase does not open the key file ${file}. ${PASSPHRASE_FIX}`;
}

export function missingPassphraseMessage(file: string): string {
  return `Keys cannot be read: the passphrase is missing, and the keys in ${file} are encrypted. ${PASSPHRASE_FIX}`;
}

/** A wrong passphrase, or a file encrypted while none was given: the IPC answers `keychain_unavailable`. */
export class KeyFileError extends CoreError {
  declare readonly code: 'keychain_unavailable';
  constructor(message: string) {
    super('keychain_unavailable', message);
    this.name = 'KeyFileError';
  }
}

interface Sealed {
  iv: string;
  tag: string;
  data: string;
}

interface FileShape {
  version: 1;
  /** Present when the keys are encrypted. */
  kdf?: { name: 'scrypt'; salt: string; N: number; r: number; p: number };
  keys: Record<string, string | Sealed>;
}

// scrypt at N=2^15, r=8 (32 MiB, ~0.1 s): the interactive cost OWASP gives for scrypt.
const SCRYPT = { N: 1 << 15, r: 8, p: 1 } as const;
const scrypt = promisify(scryptCallback) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

function deriveKey(passphrase: string, kdf: NonNullable<FileShape['kdf']>): Promise<Buffer> {
  const { N, r, p } = kdf;
  return scrypt(passphrase, Buffer.from(kdf.salt, 'base64'), 32, { N, r, p, maxmem: 256 * N * r });
}

function seal(key: Buffer, account: string, secret: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  // The account is authenticated too, so a sealed key moved under another account fails to open.
  cipher.setAAD(Buffer.from(account));
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

function unseal(key: Buffer, account: string, sealed: Sealed, file: string): string {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(account));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new KeyFileError(wrongPassphraseMessage(file));
  }
}

export function createKeyFile(options: KeyFileOptions): KeyFile {
  const { file } = options;
  const passphrase = options.passphrase === null || options.passphrase === '' ? null : options.passphrase;
  let derived: { salt: string; key: Promise<Buffer> } | null = null;
  const keyFor = (kdf: NonNullable<FileShape['kdf']>): Promise<Buffer> => {
    if (passphrase === null) throw new KeyFileError(missingPassphraseMessage(file));
    if (derived?.salt !== kdf.salt) derived = { salt: kdf.salt, key: deriveKey(passphrase, kdf) };
    return derived.key;
  };

  async function read(): Promise<FileShape> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, keys: {} };
      throw error;
    }
    try {
      const parsed = JSON.parse(text) as FileShape;
      if (typeof parsed.keys !== 'object' || parsed.keys === null) throw new Error('no keys');
      return parsed;
    } catch {
      throw new KeyFileError(`${file} is not a Clipdesk key file; move it away and store the keys again.`);
    }
  }

  async function write(shape: FileShape): Promise<void> {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(shape, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await chmod(tmp, 0o600);
      await rename(tmp, file);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
  }

  async function check(): Promise<KeyFileCheck> {
    let shape: FileShape;
    try {
      shape = await read();
    } catch (error) {
      return { state: 'unreadable', message: error instanceof Error ? error.message : String(error) };
    }
    const sealed = Object.entries(shape.keys).find(([, v]) => typeof v !== 'string');
    if (!sealed) return { state: passphrase === null ? 'plain' : 'encrypted' };
    if (passphrase === null) return { state: 'passphrase-missing', message: missingPassphraseMessage(file) };
    if (!shape.kdf)
      return { state: 'unreadable', message: `${file} holds a sealed key but no key derivation; store the key again.` };
    try {
      unseal(await keyFor(shape.kdf), sealed[0], sealed[1] as Sealed, file);
      return { state: 'encrypted' };
    } catch {
      return { state: 'passphrase-wrong', message: wrongPassphraseMessage(file) };
    }
  }

  return {
    file,
    encrypted: passphrase !== null,
    check,
    async get(account) {
      const shape = await read();
      const entry = shape.keys[account];
      if (entry === undefined) return null;
      if (typeof entry === 'string') return entry;
      if (!shape.kdf) throw new KeyFileError(`${file} holds a sealed key but no key derivation; store the key again.`);
      return unseal(await keyFor(shape.kdf), account, entry, file);
    },
    async set(account, secret) {
      const shape = await read();
      const hasSealed = Object.values(shape.keys).some((v) => typeof v !== 'string');
      if (passphrase === null) {
        if (hasSealed) await keyFor(shape.kdf!); // throws: a plain key must not join encrypted ones
        shape.keys[account] = secret;
        delete shape.kdf;
      } else {
        shape.kdf ??= { name: 'scrypt', salt: randomBytes(16).toString('base64'), ...SCRYPT };
        const key = await keyFor(shape.kdf);
        // A wrong passphrase must not seal a new key beside ones it cannot open: check one first.
        const first = Object.entries(shape.keys).find(([, v]) => typeof v !== 'string');
        if (first) unseal(key, first[0], first[1] as Sealed, file);
        // Keys kept plainly before a passphrase was given are sealed now, so the file is one kind.
        for (const [name, value] of Object.entries(shape.keys))
          if (typeof value === 'string') shape.keys[name] = seal(key, name, value);
        shape.keys[account] = seal(key, account, secret);
      }
      await write(shape);
    },
    async delete(account) {
      const shape = await read();
      if (!(account in shape.keys)) return false;
      delete shape.keys[account];
      await write(shape);
      return true;
    },
  };
}
