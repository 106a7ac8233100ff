import type { AppEvent } from '../../shared/ipc/schemas/events.ts';

/** Per subscriber; beyond this the oldest progress events are dropped (a stalled renderer must not grow main's heap). */
const MAX_BUFFERED = 1_000;

const DROPPABLE = new Set<AppEvent['type']>(['transfer.progress', 'media.task', 'queue.stats', 'ratelimit.changed']);

/**
 * Main's event hub: core services publish, every `events.subscribe` stream receives. Plain Node,
 * shared by both bindings.
 */
export class EventBus {
  private readonly subscribers = new Set<(event: AppEvent) => void>();

  publish(event: AppEvent): void {
    for (const deliver of this.subscribers) deliver(event);
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Listen without a stream (main's own notifications and taskbar progress). */
  on(listener: (event: AppEvent) => void): () => void {
    this.subscribers.add(listener);
    return () => this.subscribers.delete(listener);
  }

  /** An async stream of events until `signal` aborts (the renderer went away). */
  async *stream(signal: AbortSignal | undefined, types?: readonly string[]): AsyncGenerator<AppEvent, void, void> {
    const wanted = types && types.length > 0 ? new Set(types) : null;
    const buffer: AppEvent[] = [];
    let wake: (() => void) | null = null;
    const deliver = (event: AppEvent): void => {
      if (wanted && !wanted.has(event.type)) return;
      if (buffer.length >= MAX_BUFFERED) {
        const i = buffer.findIndex((e) => DROPPABLE.has(e.type));
        buffer.splice(i === -1 ? 0 : i, 1);
      }
      buffer.push(event);
      wake?.();
    };
    const onAbort = (): void => wake?.();
    this.subscribers.add(deliver);
    signal?.addEventListener('abort', onAbort);
    try {
      while (!signal?.aborted) {
        const next = buffer.shift();
        if (next) {
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    } finally {
      this.subscribers.delete(deliver);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}
