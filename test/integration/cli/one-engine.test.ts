// One Local engine per data folder, as a user meets it on a machine without an OS keychain
// (docs/architecture.md, "One engine per data folder"): `clipdesk` commands are child processes
// with no session bus; the app is the composition root in this process, on the same data folder.
//
// - `generate --async` then `generations wait` from the next command: the engine's own key lasts
//   across runs in the engine's data folder (0600), so the generation resumes and is followed.
// - The app renders while the CLI lists, generates and cancels on the same folder: the CLI uses the
//   app's engine instead of starting a second one, so the app's job is never taken for a crash's
//   orphan and run again; it succeeds once.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../electron/app/composition-root.ts';
import { dataFolderOwner } from '../../../shared/node/data-folder-lock.ts';
import { noKeychain } from '../../support/memory-keychain.ts';
import { startTestApp } from '../../support/test-app.ts';
import { until } from '../../support/until.ts';
import { runCli } from './run-cli.ts';

const noKeychainHere = noKeychain();

const ENV = { CLIPDESK_POLL_INTERVAL_MS: '100' };
let home: string;
let data: string;
let app: App | undefined;
const owners: ChildProcess[] = [];

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'clipdesk-one-engine-'));
  data = join(home, 'data');
});
afterAll(async () => {
  for (const owner of owners) owner.kill('SIGKILL');
  await app?.dispose();
  await rm(home, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(home, ['--data', data, ...args], ENV);
/** The second case's own data folder: its logs say only what happened there. */
const cliOn = (folder: string, ...args: string[]) => runCli(home, ['--data', folder, ...args], ENV);

describe('one Local engine per data folder', () => {
  it('--async, then generations wait from the next command: the engine key lasts across runs without a keychain', async () => {
    const started = await cli(
      'generate',
      'video',
      '--prompt',
      'a tide coming in',
      '--size',
      '360p',
      '--duration',
      '8',
      '--async',
    );
    expect(started.code, started.stderr).toBe(0);
    const id = started.stdout.trim();
    expect(id).toMatch(/^gen_/);

    const waited = await cli('generations', 'wait', id, '--json');
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ id, status: 'succeeded' });

    const keyFile = join(data, 'engine', 'engine-key.json');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const { key } = JSON.parse(await readFile(keyFile, 'utf8')) as { key: string };
    expect(key).toMatch(/^cdsk_/);
    const log = await readFile(join(data, 'logs', 'cli.log'), 'utf8');
    expect(log).not.toContain(key);
    // Both commands have ended: nothing holds the folder.
    expect(dataFolderOwner(join(data, 'engine')).held).toBe(false);
  });

  it('the app renders while the CLI lists, generates and cancels on the same folder: its job succeeds, once', async () => {
    const shared = join(home, 'shared');
    const cli = (...args: string[]) => cliOn(shared, ...args);
    const started = startTestApp({ dataDir: shared, secrets: noKeychainHere, downloadDir: join(home, 'downloads') });
    app = started.app;
    const { ipc } = started;
    const job = await ipc.jobs.submit({
      kind: 'video',
      model: 'clipdesk/motion',
      prompt: 'a slow river at night',
      size: '360p',
      duration: 8,
      public: false,
    });
    const rendering = await until('the app’s job to render', async () => {
      const j = await ipc.jobs.get({ id: job.id });
      return j.generation?.id ? j : undefined;
    });
    const appGeneration = rendering.generation!.id;

    const listed = await cli('generations', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const ids = (JSON.parse(listed.stdout) as { generations: Array<{ id: string }> }).generations.map((g) => g.id);
    expect(ids).toContain(appGeneration);

    const submitted = await cli(
      'generate',
      'video',
      '--prompt',
      'a kite',
      '--size',
      '360p',
      '--duration',
      '8',
      '--async',
    );
    expect(submitted.code, submitted.stderr).toBe(0);
    const cliGeneration = submitted.stdout.trim();
    const canceled = await cli('generations', 'cancel', cliGeneration, '--json');
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(JSON.parse(canceled.stdout)).toMatchObject({ id: cliGeneration, status: 'canceled' });

    const done = await until(
      'the app’s job to end',
      async () => {
        const j = await ipc.jobs.get({ id: job.id });
        return ['done', 'failed', 'canceled'].includes(j.state) ? j : undefined;
      },
      90_000,
    );
    expect(done.state, JSON.stringify(done)).toBe('done');
    expect(done.attempts).toBe(1);
    const after = await cli('generations', 'get', appGeneration, '--json');
    expect(JSON.parse(after.stdout)).toMatchObject({ id: appGeneration, status: 'succeeded' });
    // No process ran the app's generation again as a crash's orphan.
    const logs =
      (await readFile(join(shared, 'logs', 'cli.log'), 'utf8')) +
      (await readFile(join(shared, 'logs', 'app.log'), 'utf8'));
    expect(logs).not.toMatch(/after a restart|resuming \d+ asynchronous/);
    expect(logs).toContain('using the Local engine another process runs');
    const owner = dataFolderOwner(join(shared, 'engine'));
    expect(owner.held && owner.owner?.program).toBe("the Clipdesk app's Local engine");
    // A provider key stored beside the running app says when that engine takes it.
    const setKey = await runCli(
      home,
      ['--data', shared, '--key-store', 'file', 'providers', 'set-key', 'fal'],
      { ...ENV, CLIPDESK_KEY_PASSPHRASE: 'a passphrase' },
      'fal-test-key-0001:abcdef1234\n',
    );
    expect(setKey.code, setKey.stderr).toBe(0);
    expect(setKey.stderr).toMatch(
      /The Local engine running now in the Clipdesk app's Local engine \(pid \d+\) uses this key from its next start/,
    );
  });

  it('the owner killed (kill -9) while a command uses its engine: the command takes the engine over and resumes', async () => {
    const folder = join(home, 'takeover');
    const owner = await engineOwner(join(folder, 'engine'));
    const cli = (...args: string[]) => cliOn(folder, ...args);
    const submitted = await cli(
      'generate',
      'video',
      '--prompt',
      'a lantern',
      '--size',
      '360p',
      '--duration',
      '8',
      '--async',
    );
    expect(submitted.code, submitted.stderr).toBe(0);
    const id = submitted.stdout.trim();
    // The wait uses the owner's engine; the owner dies under it.
    let killed = false;
    const waited = await runCli(home, ['--data', folder, 'generations', 'wait', id, '--json'], ENV, '', (stderr) => {
      if (killed || !stderr.includes(`${id}:`)) return;
      killed = true;
      owner.kill('SIGKILL');
    });
    expect(killed).toBe(true);
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ id, status: 'succeeded' });
    const log = await readFile(join(folder, 'logs', 'cli.log'), 'utf8');
    expect(log).toContain('the process that ran the Local engine is gone; starting it here');
    expect(log).toMatch(/resuming 1 asynchronous generation/);
  });
});

describe('the app on an engine another process runs', () => {
  it('uses it, and once that process is killed runs the engine itself on the same address: its job resumes and succeeds', async () => {
    const folder = join(home, 'app-takes-over');
    const owner = await engineOwner(join(folder, 'engine'));
    const started = startTestApp({ dataDir: folder, secrets: noKeychainHere, downloadDir: join(home, 'downloads-2') });
    const { ipc } = started;
    try {
      const job = await ipc.jobs.submit({
        kind: 'video',
        model: 'clipdesk/motion',
        prompt: 'a windmill in rain',
        size: '360p',
        duration: 8,
        public: false,
      });
      await until('the app’s job to render on the other engine', async () => {
        const j = await ipc.jobs.get({ id: job.id });
        return j.generation?.id ? j : undefined;
      });
      const before = (await ipc.profiles.list()).profiles.find((p) => p.kind === 'local')!.baseUrl;
      owner.kill('SIGKILL');
      const done = await until(
        'the app’s job to end',
        async () => {
          const j = await ipc.jobs.get({ id: job.id });
          return ['done', 'failed', 'canceled'].includes(j.state) ? j : undefined;
        },
        90_000,
      );
      expect(done.state, JSON.stringify(done)).toBe('done');
      const after = (await ipc.profiles.list()).profiles.find((p) => p.kind === 'local')!.baseUrl;
      expect(after).toBe(before);
      const log = await readFile(join(folder, 'logs', 'app.log'), 'utf8');
      expect(log).toContain('the process that ran the Local engine is gone; starting it here');
      expect(dataFolderOwner(join(folder, 'engine'))).toMatchObject({
        held: true,
        owner: { program: "the Clipdesk app's Local engine" },
      });
    } finally {
      await started.app.dispose();
    }
  });
});

/** A process that runs the engine on `engineDir` (engine-owner-child.ts), once its engine listens. */
function engineOwner(engineDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'engine-owner-child.ts'), engineDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  owners.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the engine owner exited ${code}`)));
  });
}
