import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { ProviderEntry, ProvidersList } from '../../../../shared/ipc/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { ProvidersPanel } from '../../../../renderer/src/features/providers/components/ProvidersPanel.tsx';
import { useProviders } from '../../../../renderer/src/features/providers/store/index.ts';
import { IpcError } from '../../../../renderer/src/lib/ipc.ts';
import { PARTIAL_SYNC_REPORT } from '../../../support/catalog-sync-report.ts';
import { installFakeIpc, model, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;

function entry(over: Partial<ProviderEntry> = {}): ProviderEntry {
  return {
    id: 'fal',
    slug: 'fal',
    name: 'fal',
    description: 'Generative media on fal.ai',
    status: 'ok',
    models: ['kling/v2.1'],
    features: ['text_to_video'],
    kind: 'remote',
    configured: false,
    last4: null,
    enabled: true,
    baseUrl: null,
    health: { status: 'unknown', lastError: null, message: null, since: null },
    ...over,
  };
}

const KEY = 'fal-secret-0a1b2c3d9f8e';
const kling = model({
  id: 'kling/v2.1',
  base: 'kling',
  slug: 'v2.1',
  name: 'Kling 2.1',
  providers: [
    { id: 'fal', slug: 'fal', price: 0.056, features: ['text_to_video'] },
    { id: 'replicate', slug: 'replicate', price: 0.07, features: ['text_to_video'] },
  ],
});

function list(providers: ProviderEntry[], keysHeldBy: ProvidersList['keysHeldBy'] = 'app'): ProvidersList {
  return { keysHeldBy, providers };
}

beforeEach(() => {
  ipc = installFakeIpc();
  useProviders.getState().reset();
  useModels.getState().reset();
  useModels.setState({ status: 'ready', models: [kling], catalog: [kling], providers: [] });
});
afterEach(cleanup);

async function renderWith(l: ProvidersList) {
  ipc.providers.list.mockResolvedValue(l);
  render(<ProvidersPanel />);
  return screen.findByRole('group', { name: `Provider ${l.providers[0]!.name}` });
}

describe('Settings → Providers', () => {
  it('lists each provider with what it offers and its price, and a key box when it has no key', async () => {
    const fal = await renderWith(list([entry(), entry({ id: 'replicate', slug: 'replicate', name: 'Replicate' })]));
    expect(within(fal).getByText('Kling 2.1')).toBeTruthy();
    expect(within(fal).getByText('$0.056 / s')).toBeTruthy();
    expect(within(fal).getByText('No key')).toBeTruthy();
    expect(within(fal).getByLabelText('fal API key').getAttribute('type')).toBe('password');
    expect(screen.getByRole('group', { name: 'Provider Replicate' })).toBeTruthy();
    expect(screen.getByText('0 of 2 AI providers ready')).toBeTruthy();
  });

  it('shows a configured key only as its last 4 characters, never the key', async () => {
    const fal = await renderWith(
      list([
        entry({
          configured: true,
          last4: '9f8e',
          health: { status: 'ok', lastError: null, message: null, since: null },
        }),
      ]),
    );
    expect(within(fal).getByLabelText('Stored fal key').textContent).toBe('Key ••••9f8e');
    expect(within(fal).getByText('Healthy')).toBeTruthy();
    expect(fal.querySelector('input[type="password"]')).toBeNull();
  });

  it('saves a pasted key, clears the field and never renders the key back', async () => {
    const fal = await renderWith(list([entry()]));
    ipc.providers.setKey.mockResolvedValue(list([entry({ configured: true, last4: '9f8e' })]));
    const input = within(fal).getByLabelText<HTMLInputElement>('fal API key');
    fireEvent.change(input, { target: { value: KEY } });
    fireEvent.click(within(fal).getByRole('button', { name: 'Save key' }));
    await waitFor(() => expect(within(fal).getByLabelText('Stored fal key').textContent).toBe('Key ••••9f8e'));
    expect(ipc.providers.setKey).toHaveBeenCalledWith({ id: 'fal', key: KEY });
    expect(document.body.innerHTML).not.toContain(KEY);
    // Replacing starts from an empty field.
    fireEvent.click(within(fal).getByRole('button', { name: 'Replace' }));
    expect(within(fal).getByLabelText<HTMLInputElement>('New fal API key').value).toBe('');
  });

  it('says clearly when a pasted key has whitespace in it, and sends nothing', async () => {
    const fal = await renderWith(list([entry()]));
    const input = within(fal).getByLabelText<HTMLInputElement>('fal API key');
    // A single-line field drops line breaks itself (HTML's value sanitisation); a pasted trailing
    // space or one from a wrapped line stays, and main refuses line breaks from any other caller.
    fireEvent.change(input, { target: { value: `${KEY} ` } });
    expect(within(fal).getByRole('alert').textContent).toMatch(/space or a line break/);
    expect(input.getAttribute('aria-invalid')).toBe('true');
    fireEvent.submit(input.closest('form')!);
    await Promise.resolve();
    expect(ipc.providers.setKey).not.toHaveBeenCalled();
    expect(input.value).toBe(`${KEY} `); // nothing lost: the user can fix the paste
  });

  it("shows main's refusal (no keychain) under the field", async () => {
    const fal = await renderWith(list([entry()]));
    ipc.providers.setKey.mockRejectedValue(
      new IpcError({ code: 'keychain_unavailable', message: 'No OS keychain is available: no Secret Service.' }),
    );
    fireEvent.change(within(fal).getByLabelText('fal API key'), { target: { value: KEY } });
    fireEvent.click(within(fal).getByRole('button', { name: 'Save key' }));
    expect((await within(fal).findByRole('alert')).textContent).toBe('No OS keychain is available: no Secret Service.');
  });

  it('says, as an error with its fix, that the key file does not open, not only "No key"', async () => {
    const problem =
      'Keys cannot be read: the passphrase does not open the key file /d/keys.json. Set CLIPDESK_KEY_PASSPHRASE to the passphrase the keys were stored with.';
    await renderWith({ ...list([entry()]), keyStore: problem, keyStoreAvailable: false });
    expect(screen.getByRole('alert').textContent).toBe(problem);
  });

  it('tests a key and says plainly whether it works', async () => {
    const fal = await renderWith(list([entry({ configured: true, last4: '9f8e' })]));
    ipc.providers.testKey.mockResolvedValueOnce({ ok: true, message: 'fal accepted the key.' });
    fireEvent.click(within(fal).getByRole('button', { name: 'Test key' }));
    expect((await within(fal).findByRole('status')).textContent).toBe('✓ fal accepted the key.');
    expect(ipc.providers.testKey).toHaveBeenCalledWith({ id: 'fal' });

    ipc.providers.testKey.mockResolvedValueOnce({ ok: false, message: 'fal refused the key (401).' });
    fireEvent.click(within(fal).getByRole('button', { name: 'Test key' }));
    await waitFor(() => expect(within(fal).getByRole('status').textContent).toBe('✗ fal refused the key (401).'));
  });

  it('shows an unhealthy provider with the class of its last error and since when', async () => {
    const fal = await renderWith(
      list([
        entry({
          configured: true,
          last4: '9f8e',
          health: {
            status: 'unhealthy',
            lastError: 'auth',
            message: 'fal refused the key',
            since: '2026-11-23T14:02:00Z',
          },
        }),
      ]),
    );
    expect(within(fal).getByLabelText('Health').textContent).toBe('Unhealthy: key refused');
    expect(fal.textContent).toMatch(/since .*2026.* · fal refused the key/);
  });

  it('switches a provider off and sets its base URL under Advanced, refusing a URL that is not http(s)', async () => {
    const fal = await renderWith(list([entry()]));
    ipc.providers.setEnabled.mockResolvedValue(list([entry({ enabled: false })]));
    fireEvent.click(within(fal).getByRole('switch', { name: 'Use fal' }));
    await waitFor(() => expect(within(fal).getByText('Off', { selector: '.badge' })).toBeTruthy());
    expect(ipc.providers.setEnabled).toHaveBeenCalledWith({ id: 'fal', enabled: false });

    const url = within(fal).getByLabelText<HTMLInputElement>('API base URL');
    fireEvent.change(url, { target: { value: 'ftp://files.example' } });
    fireEvent.submit(url.closest('form')!);
    expect((await within(fal).findByRole('alert')).textContent).toMatch(/http:\/\/ or https:\/\//);
    expect(ipc.providers.setBaseUrl).not.toHaveBeenCalled();

    ipc.providers.setBaseUrl.mockResolvedValue(list([entry({ enabled: false, baseUrl: 'http://127.0.0.1:9000' })]));
    fireEvent.change(url, { target: { value: 'http://127.0.0.1:9000/' } });
    fireEvent.submit(url.closest('form')!);
    await waitFor(() => expect(within(fal).getByRole('button', { name: 'Use default' })).toBeTruthy());
    expect(ipc.providers.setBaseUrl).toHaveBeenCalledWith({ id: 'fal', baseUrl: 'http://127.0.0.1:9000/' });
  });

  it("is read-only for a remote profile and says that service's operator holds the keys", async () => {
    const fal = await renderWith(
      list(
        [
          entry({ configured: true, health: { status: 'ok', lastError: null, message: null, since: null } }),
          entry({ id: 'openai', slug: 'openai', name: 'OpenAI', configured: false }),
        ],
        'operator',
      ),
    );
    expect(screen.getByRole('note').textContent).toMatch(/operator holds their keys/);
    expect(document.querySelector('input')).toBeNull();
    expect(screen.queryByRole('switch')).toBeNull();
    expect(screen.queryByRole('button', { name: /Test key|Save key|Remove/ })).toBeNull();
    expect(within(fal).getByText('Configured')).toBeTruthy();
    expect(within(screen.getByRole('group', { name: 'Provider OpenAI' })).getByText('Not configured')).toBeTruthy();
  });
});

describe('Settings → Providers → Refresh models', () => {
  const replicate = () => entry({ id: 'replicate', slug: 'replicate', name: 'Replicate' });
  const refreshButton = () => screen.getByRole<HTMLButtonElement>('button', { name: /Refresh models|Reading/ });

  it('says what it waits for, then each provider’s result, and that the last catalog was kept', async () => {
    await renderWith(list([entry(), replicate()]));
    let answer!: (report: unknown) => void;
    ipc.providers.refreshModels.mockReturnValue(new Promise((resolve) => (answer = resolve)));
    fireEvent.click(refreshButton());
    expect(refreshButton().textContent).toBe('Reading fal’s and Replicate’s model listings…');
    expect(refreshButton().disabled).toBe(true);
    answer(PARTIAL_SYNC_REPORT);
    const report = await screen.findByRole('status', { name: 'Last refresh' });
    expect([...report.querySelectorAll('li')].map((li) => li.textContent)).toEqual([
      'fal: 112 models, 98 prices',
      'Replicate: Replicate could not be reached',
      'Kept the last catalog for what could not be read.',
      'Now 90 video and 31 image models.',
    ]);
    expect(refreshButton().textContent).toBe('Refresh models');
    expect(ipc.providers.refreshModels).toHaveBeenCalledTimes(1);
  });

  it('says why when the sync cannot run', async () => {
    await renderWith(list([entry()]));
    ipc.providers.refreshModels.mockRejectedValue(
      new IpcError({ code: 'internal_error', message: 'this Local engine cannot sync its catalog' }),
    );
    fireEvent.click(refreshButton());
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Could not refresh the models: this Local engine cannot sync its catalog',
    );
  });

  it('is off for a remote service, which keeps its own model list', async () => {
    await renderWith(list([entry()], 'operator'));
    expect(refreshButton().disabled).toBe(true);
    expect(screen.getByText('This service keeps its own model list; refresh it there')).toBeTruthy();
  });
});
