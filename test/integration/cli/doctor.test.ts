// `clipdesk doctor` on this machine: the real ffmpeg, keychain probe, folders and Local engine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { logFilePath } from '../../../shared/node/log-path.ts';
import { startService } from '../../../server/index.ts';
import type { RunningService } from '../../../server/index.ts';
import { runCli } from './run-cli.ts';

interface Report {
  ok: boolean;
  checks: Array<{ name: string; status: 'ok' | 'warn' | 'fail'; detail: string }>;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-doctor-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const doctor = (args: string[], env: Record<string, string> = {}) =>
  runCli(dir, ['--data', join(dir, 'data'), ...args, 'doctor'], env);
const check = (report: Report, name: string) => report.checks.find((c) => c.name === name);

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('clipdesk doctor', () => {
  it('prints every check and exits 0 on a working machine (the embedded engine)', async () => {
    const res = await doctor([]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    for (const name of ['node', 'ffmpeg', 'ffprobe', 'keychain', 'data', 'engine data', 'downloads', 'service', 'key'])
      expect(res.stdout).toMatch(new RegExp(`^(ok|warn) +${name} `, 'm'));
    expect(res.stdout).toContain(`v${process.versions.node}`);
    expect(res.stdout).toMatch(/^ok +ffmpeg +\S+.* at \//m);
    expect(res.stdout).toMatch(/^(ok|warn) +data +.*\d+(\.\d)? [GM]B free$/m);
    expect(res.stdout).toMatch(/^warn +keychain +none: /m); // no session bus here
    // The log this CLI writes (cli.log), and the app's.
    expect(res.stdout).toMatch(new RegExp(`log file +${logFilePath(join(dir, 'data'), 'cli')}\\n`));
    expect(res.stdout).toContain(logFilePath(join(dir, 'data'), 'app'));

    const json = await doctor(['--json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as Report;
    expect(report.ok).toBe(true);
    expect(check(report, 'key')).toMatchObject({ status: 'ok' });
    expect(check(report, 'log file')?.detail).toBe(logFilePath(join(dir, 'data'), 'cli'));
    expect(check(report, 'app log file')?.detail).toBe(logFilePath(join(dir, 'data'), 'app'));
  });

  it('warns when ffmpeg and ffprobe differ by major version', async () => {
    const fake = join(dir, 'ffprobe-9');
    await writeFile(fake, '#!/bin/sh\necho "ffprobe version 9.0.1 Copyright (c) the FFmpeg developers"\n');
    await chmod(fake, 0o755);
    const fakeFfmpeg = join(dir, 'ffmpeg-8');
    await writeFile(fakeFfmpeg, '#!/bin/sh\necho "ffmpeg version n8.0 Copyright (c) the FFmpeg developers"\n');
    await chmod(fakeFfmpeg, 0o755);
    const res = await doctor(['--json'], { CLIPDESK_FFPROBE: fake, CLIPDESK_FFMPEG: fakeFfmpeg });
    const report = JSON.parse(res.stdout) as Report;
    expect(check(report, 'ffprobe')?.detail).toMatch(/^9\.0\.1 at /);
    expect(check(report, 'ffmpeg/ffprobe')).toMatchObject({ status: 'warn' });
    expect(check(report, 'ffmpeg/ffprobe')?.detail).toMatch(/major version 8 but ffprobe is 9/);
  });

  it('says which pair runs and where from: a consistent pair on the PATH before the npm builds', async () => {
    const bin = join(dir, 'path-pair');
    await mkdir(bin, { recursive: true });
    for (const tool of ['ffmpeg', 'ffprobe']) {
      await writeFile(
        join(bin, tool),
        `#!/bin/sh\necho "${tool} version 7.1.1-1+b1 Copyright (c) the FFmpeg developers"\n`,
      );
      await chmod(join(bin, tool), 0o755);
    }
    const res = await doctor(['--json'], { PATH: `${bin}${delimiter}${process.env['PATH'] ?? ''}` });
    const report = JSON.parse(res.stdout) as Report;
    expect(check(report, 'ffmpeg')?.detail).toBe(
      `7.1.1-1+b1 at ${join(bin, 'ffmpeg')} (from the PATH's ffmpeg + ffprobe pair)`,
    );
    expect(check(report, 'ffprobe')?.detail).toBe(
      `7.1.1-1+b1 at ${join(bin, 'ffprobe')} (from the PATH's ffmpeg + ffprobe pair)`,
    );
    expect(check(report, 'ffmpeg/ffprobe')).toBeUndefined();
  });

  it.skipIf(process.platform !== 'linux')(
    'without a pair on the PATH the npm builds run, and the 2018 build is one warning line with its fix',
    async () => {
      const empty = join(dir, 'empty-path');
      await mkdir(empty, { recursive: true });
      const res = await doctor([], { PATH: empty });
      expect(res.stdout).toMatch(/^ok +ffmpeg +.* at .*@ffmpeg-installer.* \(from the bundled build\)$/m);
      expect(res.stdout).toMatch(/^ok +ffprobe +.* at .*@ffprobe-installer.* \(from the bundled build\)$/m);
      const warnings = res.stdout.split('\n').filter((l) => /^warn +ffmpeg\/ffprobe /.test(l));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /the bundled ffmpeg is the 2018 build \(4\.x\)\. Fix: sudo apt install ffmpeg \(Clipdesk then runs that pair from the PATH\)$/,
      );
    },
  );

  it('exits non-zero when ffmpeg is missing', async () => {
    const res = await doctor(['--json'], { CLIPDESK_FFMPEG: join(dir, 'no-such-ffmpeg') });
    expect(res.code).toBe(1);
    const report = JSON.parse(res.stdout) as Report;
    expect(report.ok).toBe(false);
    expect(check(report, 'ffmpeg')).toMatchObject({ status: 'fail' });
  });

  it('exits non-zero when the service is unreachable', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const res = await doctor(['--base-url', url], { CLIPDESK_RATE_LIMIT_RETRIES: '0' });
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^fail +service +.*not reachable/m);
  });

  it('tells a service that answers something unexpected from one that is not reachable, naming endpoint and field', async () => {
    // Answers every request, but GET /usage without the spec's `result`.
    const odd = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, usage: {} }));
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(odd.address() as AddressInfo).port}/v1`;
      const res = await doctor(['--base-url', url, '--json'], {
        CLIPDESK_API_KEY: 'k',
        CLIPDESK_RATE_LIMIT_RETRIES: '0',
      });
      expect(res.code).toBe(1);
      const detail = check(JSON.parse(res.stdout) as Report, 'service')?.detail ?? '';
      expect(detail).toMatch(/is reachable but answered something unexpected \(HTTP 200\)/);
      expect(detail).toContain('GET /usage');
      expect(detail).toContain('result');
      expect(detail).not.toMatch(/not reachable/);
    } finally {
      await new Promise<void>((resolve) => odd.close(() => resolve()));
    }
  });

  describe('against a remote service', () => {
    let service: RunningService;
    beforeAll(async () => {
      service = await startService({ dataDir: join(dir, 'remote'), sweepIntervalMs: 0 });
    });
    afterAll(async () => {
      await service.close();
    });

    it('reports the key: accepted from CLIPDESK_API_KEY, or refused (exit 1)', async () => {
      const { key } = await service.createKey({ user: 'dora', tier: 'free' });
      const good = await doctor(['--base-url', service.url, '--json'], { CLIPDESK_API_KEY: key });
      expect(good.code, good.stdout).toBe(0);
      const report = JSON.parse(good.stdout) as Report;
      expect(check(report, 'service')).toMatchObject({ status: 'ok' });
      expect(check(report, 'key')?.detail).toMatch(/^accepted, from CLIPDESK_API_KEY; tier free$/);
      expect(good.stdout).not.toContain(key);

      const bad = await doctor(['--base-url', service.url, '--json'], { CLIPDESK_API_KEY: 'cdsk_wrong' });
      expect(bad.code).toBe(1);
      expect(check(JSON.parse(bad.stdout) as Report, 'key')).toMatchObject({ status: 'fail' });
    });
  });
});
