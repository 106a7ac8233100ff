import { describe, expect, it } from 'vitest';
import { checkExternalUrl } from '../../../../electron/app/external-url.ts';
import { electronPlatform } from '../../../../electron/main/platform/desktop.ts';

describe('openExternal gate', () => {
  it.each([
    ['https://example.com/', 'https://example.com/'],
    ['http://example.com/a?b=c#d', 'http://example.com/a?b=c#d'],
    ['HTTPS://Example.COM/Path', 'https://example.com/Path'],
    ['https://xn--e1afmkfd.xn--p1ai/', 'https://xn--e1afmkfd.xn--p1ai/'],
  ])('allows %s', (input, normalised) => {
    expect(checkExternalUrl(input)).toEqual({ ok: true, url: normalised });
  });

  it.each([
    ['file:', 'file:///etc/passwd'],
    ['file: host', 'file://server/share/x.exe'],
    ['javascript:', 'javascript:alert(1)'],
    ['javascript: mixed case', 'JaVaScRiPt:alert(1)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['vbscript:', 'vbscript:msgbox(1)'],
    ['custom scheme', 'ms-msdt:/id PCWDiagnostic'],
    ['smb:', 'smb://server/share'],
    ['UNC path', '\\\\server\\share\\payload.exe'],
    ['UNC with forward slashes', '//server/share/payload.exe'],
    ['backslash host trick', 'https:\\\\evil.test'],
    ['backslash in path', 'https://example.com\\@evil.test/'],
    ['NUL', 'https://example.com/\u0000.exe'],
    ['NUL encoded-free raw', 'https://exa\u0000mple.com/'],
    ['newline', 'https://example.com/\nfile:///etc/passwd'],
    ['leading space', ' https://example.com/'],
    ['tab', 'https://exa\tmple.com/'],
    ['over-long', `https://example.com/${'a'.repeat(2100)}`],
    ['user@host', 'https://bank.example@evil.test/'],
    ['user:pass@host', 'https://user:pass@evil.test/'],
    ['encoded @ in user', 'https://bank.example%40evil.test@evil.test/'],
    ['empty host', 'https:///path'],
    ['no scheme', 'example.com'],
    ['relative', '/settings'],
    ['empty', ''],
    ['not a string', 42],
  ])('refuses %s', (_name, input) => {
    expect(checkExternalUrl(input).ok).toBe(false);
  });

  it('the Electron platform checks again before calling shell.openExternal', async () => {
    const opened: string[] = [];
    const platform = electronPlatform({
      shell: { openExternal: (u) => (opened.push(u), Promise.resolve()), showItemInFolder: () => undefined },
      dialog: { showOpenDialog: () => Promise.resolve({ canceled: true, filePaths: [] }) },
      Notification: Object.assign(
        class {
          show(): void {}
          on(): this {
            return this;
          }
        },
        { isSupported: () => true },
      ),
      window: () => null,
    });
    await expect(platform.openExternal('file:///etc/passwd')).rejects.toThrow(/refused/);
    await platform.openExternal('https://example.com/');
    expect(opened).toEqual(['https://example.com/']);
  });
});
