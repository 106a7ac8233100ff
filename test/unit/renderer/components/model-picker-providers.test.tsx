import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, screen, within } from '@testing-library/react';
import type { ProviderEntry } from '../../../../shared/ipc/index.ts';
import { renderOpenCompose } from './open-canvas.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { usableModels } from '../../../../renderer/src/stores/models/selectors.ts';
import { installFakeIpc, model, type FakeIpc } from '../fixtures.ts';

// The picker with real providers: only models a usable provider offers, who offers each at what
// price, and a routing preview that names the provider and its price.
let ipc: FakeIpc;

function provider(id: string, name: string, over: Partial<ProviderEntry> = {}): ProviderEntry {
  return {
    id,
    slug: id,
    name,
    description: '',
    status: 'ok',
    models: [],
    features: [],
    kind: 'remote',
    configured: true,
    last4: '1234',
    enabled: true,
    baseUrl: null,
    health: { status: 'ok', lastError: null, message: null, since: null },
    ...over,
  };
}

const kling = model({
  id: 'kling/v2.1',
  base: 'kling',
  slug: 'v2.1',
  name: 'Kling 2.1',
  description: 'Kling video',
  providers: [
    { id: 'replicate', slug: 'replicate', name: 'Replicate', price: 0.07, features: ['text_to_video'] },
    { id: 'fal', slug: 'fal', name: 'fal', price: 0.056, features: ['text_to_video'] },
    { id: 'google', slug: 'google', name: 'Google', price: 0.5, features: ['text_to_video'] },
  ],
});
const runwayOnly = model({
  id: 'runway/gen4-turbo',
  base: 'runway',
  slug: 'gen4-turbo',
  name: 'Gen-4 Turbo',
  providers: [{ id: 'runway', slug: 'runway', name: 'Runway', price: 0.05, features: ['image_to_video'] }],
});

beforeEach(() => {
  ipc = installFakeIpc();
  useCompose.getState().reset();
  useModels.getState().reset();
  ipc.models.list.mockResolvedValue({ models: [kling, runwayOnly] });
});
afterEach(cleanup);

function providers(over: Record<string, Partial<ProviderEntry>> = {}) {
  return {
    keysHeldBy: 'app',
    providers: [
      provider('fal', 'fal', over['fal']),
      provider('replicate', 'Replicate', over['replicate']),
      provider('google', 'Google', { configured: false, last4: null, ...over['google'] }),
      provider('runway', 'Runway', { configured: false, last4: null, ...over['runway'] }),
    ],
  };
}

async function pickKling(): Promise<HTMLElement> {
  renderOpenCompose();
  fireEvent.change(await screen.findByLabelText('Prompt'), { target: { value: 'a fox' } });
  const option = await screen.findByRole('option', { name: /Kling 2.1/ });
  fireEvent.click(option);
  return option;
}

describe('the model picker with real providers', () => {
  it('offers only models a configured, switched-on provider offers, with who offers them and at what price', async () => {
    ipc.providers.list.mockResolvedValue(providers());
    const option = await pickKling();
    expect(screen.queryByRole('option', { name: /Gen-4 Turbo/ })).toBeNull(); // Runway has no key
    // Not Google (no key). The canvas's model list shows one price; who offers it at what price is in
    // its accessible name, not a paragraph of prices on the card.
    expect(within(option).queryByText('fal $0.056 / s · Replicate $0.070 / s')).toBeNull();
    expect(option.getAttribute('aria-label')).toMatch(/offered by fal \$0\.056 \/ s · Replicate/);
    const select = screen.getByLabelText<HTMLSelectElement>('Provider');
    expect([...select.options].map((o) => o.textContent)).toEqual([
      'Automatic (routing decides)',
      'Replicate — $0.070 / s',
      'fal — $0.056 / s',
    ]);
  });

  it('names the provider and price the service’s routing preview gives, pinned or routed (never a guess)', async () => {
    ipc.providers.list.mockResolvedValue(providers());
    // The service skips fal (unhealthy) for routing: whatever it says is what the bar shows.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the fake of an async IPC route
    ipc.compose.preview.mockImplementation((request: { provider?: string }) => {
      const chosen = request.provider === 'fal' ? { id: 'fal', name: 'fal' } : { id: 'replicate', name: 'Replicate' };
      const row = (routing: string) => ({
        routing,
        provider: { ...chosen, slug: chosen.id },
        unitPrice: 0.35,
        price: 0.35,
        dropped: [],
        reason: 'why',
        error: null,
      });
      return Promise.resolve({
        model: 'kling/v2.1',
        media: 'video',
        count: 1,
        routing: 'optimal',
        pinned: request.provider ? { ...chosen, slug: chosen.id } : null,
        rows: ['optimal', 'cheapest', 'compatible'].map(row),
      });
    });
    await pickKling();
    expect(await screen.findByText('Via Replicate')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Provider'), { target: { value: 'fal' } });
    expect(await screen.findByText('Pinned to fal')).toBeTruthy();
  });

  it('a switched-off provider drops out, and a model only it offers too', () => {
    const list = providers({ fal: { enabled: false }, runway: { configured: true } }).providers;
    const usable = usableModels([kling, runwayOnly], list);
    expect(usable.map((m) => m.id)).toEqual(['kling/v2.1', 'runway/gen4-turbo']);
    expect(usable[0]!.providers!.map((o) => o.id)).toEqual(['replicate']);
    // A service that does not say whether a provider is configured (an older one): its offers stay.
    expect(usableModels([kling], [])).toEqual([kling]);
  });
});

describe('a service that sends only the spec’s fields (docs/api.md "Extensions")', () => {
  const bare = { id: 'acme/motion:v2', base: 'acme', slug: 'motion', name: 'Acme Motion', media: 'video' };

  it('shows the price as known after generation, offers Automatic plus its providers, and the spec’s limits', async () => {
    ipc.models.list.mockResolvedValue({ models: [bare, { ...bare, id: 'acme/other', slug: 'other', name: 'Other' }] });
    ipc.providers.list.mockResolvedValue({
      keysHeldBy: 'operator',
      providers: [provider('prov_alpha', 'Alpha'), provider('prov_beta', 'Beta')],
    });
    renderOpenCompose();
    fireEvent.change(await screen.findByLabelText('Prompt'), { target: { value: 'a fox' } });
    const option = await screen.findByRole('option', { name: /Acme Motion/ });
    expect(within(option).getByText('price known after generation')).toBeTruthy();
    // Said once for the list, not once per model.
    expect(screen.getAllByText(/does not list offers or prices/)).toHaveLength(1);
    fireEvent.click(option);
    const select = screen.getByLabelText<HTMLSelectElement>('Provider');
    expect([...select.options].map((o) => o.textContent)).toEqual(['Automatic (routing decides)', 'Alpha', 'Beta']);
    expect(screen.getByText(/interface’s own limits apply/)).toBeTruthy();
    // The routing choice is still offered.
    expect(screen.getByRole('radio', { name: 'Cheapest' })).toBeTruthy();
    expect(useCompose.getState().params).toMatchObject({ duration: 5, size: '1080p' });
  });
});
