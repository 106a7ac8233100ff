import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataFolderInUseError, dataFolderOwner, takeDataFolderLock } from '../../../../shared/node/data-folder-lock.ts';

// The data folder's lock (docs/architecture.md, "One engine per data folder"): held by a live
// process, named by its sidecar, refused to anyone else, in this process too; dropped by the
// kernel the moment its holder is killed.
const LOCK = new URL('../../../../shared/node/data-folder-lock.ts', import.meta.url).href;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-lock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Another process holding the lock on `folder` until it is killed; resolves with it once it holds it. */
function holder(folder: string) {
  const code = `const { takeDataFolderLock } = await import(${JSON.stringify(LOCK)});
const lock = takeDataFolderLock(${JSON.stringify(folder)}, { program: 'a test holder' });
lock.setUrl('http://127.0.0.1:9/v1');
process.stdout.write('held\\n');
setInterval(() => undefined, 60_000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise<typeof child>((resolve, reject) => {
    child.stdout.once('data', () => resolve(child));
    child.once('exit', (c) => reject(new Error(`the holder exited ${c}`)));
  });
}

describe('the data folder lock', () => {
  it('is held, named and refused while its holder lives, in this process too; free once released', () => {
    const folder = join(dir, 'here');
    expect(dataFolderOwner(folder)).toEqual({ held: false });
    mkdirSync(folder, { recursive: true });
    const lock = takeDataFolderLock(folder, { program: 'this test' });
    lock.setUrl('http://127.0.0.1:1234/v1');
    expect(dataFolderOwner(folder)).toMatchObject({
      held: true,
      owner: { pid: process.pid, url: 'http://127.0.0.1:1234/v1', program: 'this test' },
    });
    let refused: unknown;
    try {
      takeDataFolderLock(folder, { program: 'a second one', waitMs: 0 });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(DataFolderInUseError);
    expect((refused as Error).message).toContain(`this test (pid ${process.pid}, http://127.0.0.1:1234/v1`);
    // A refused attempt in the same process drops nothing of the holder's lock.
    expect(dataFolderOwner(folder).held).toBe(true);
    lock.release();
    expect(dataFolderOwner(folder)).toEqual({ held: false });
  });

  it('held by another process: refused naming it; after its kill -9 taken at once', async () => {
    const folder = join(dir, 'there');
    mkdirSync(folder, { recursive: true });
    const child = await holder(folder);
    const state = dataFolderOwner(folder);
    expect(state).toMatchObject({ held: true, owner: { pid: child.pid, url: 'http://127.0.0.1:9/v1' } });
    expect(() => takeDataFolderLock(folder, { program: 'me', waitMs: 0 })).toThrow(`pid ${child.pid}`);
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
    const lock = takeDataFolderLock(folder, { program: 'me', waitMs: 0 });
    expect(dataFolderOwner(folder)).toMatchObject({ held: true, owner: { pid: process.pid, program: 'me' } });
    lock.release();
  });
});
