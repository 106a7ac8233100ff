import type { WebContentsLike, WindowConstructor, WindowLike } from '../../../../electron/main/platform/types.ts';

type WindowOptions = ConstructorParameters<WindowConstructor>[0];

type NavListener = (event: { preventDefault(): void }, url: string) => void;

/** A typed fake of the part of webContents main touches. */
export class FakeWebContents implements WebContentsLike {
  openHandler: ((d: { url: string }) => { action: 'deny' }) | null = null;
  readonly listeners = new Map<string, ((...args: never[]) => void)[]>();
  setWindowOpenHandler(handler: (d: { url: string }) => { action: 'deny' }): void {
    this.openHandler = handler;
  }
  on(event: string, listener: (...args: never[]) => void): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  /** Fires a navigation event; true when it was prevented. */
  navigate(event: 'will-navigate' | 'will-redirect', url: string): boolean {
    let prevented = false;
    for (const l of this.listeners.get(event) ?? [])
      (l as unknown as NavListener)({ preventDefault: () => (prevented = true) }, url);
    return prevented;
  }
  attachWebview(): boolean {
    let prevented = false;
    for (const l of this.listeners.get('will-attach-webview') ?? [])
      (l as unknown as NavListener)({ preventDefault: () => (prevented = true) }, '');
    return prevented;
  }
}

export class FakeWindow implements WindowLike {
  static created: FakeWindow[] = [];
  readonly webContents = new FakeWebContents();
  readonly options: WindowOptions;
  loaded: string | null = null;
  progress: number | null = null;
  constructor(options: WindowOptions) {
    this.options = options;
    FakeWindow.created.push(this);
  }
  loadURL(url: string): Promise<void> {
    this.loaded = url;
    return Promise.resolve();
  }
  once(): this {
    return this;
  }
  show(): void {}
  focus(): void {}
  restore(): void {}
  isMinimized(): boolean {
    return false;
  }
  isFocused(): boolean {
    return true;
  }
  isDestroyed(): boolean {
    return false;
  }
  setProgressBar(progress: number): void {
    this.progress = progress;
  }
}
