import { lazy, Suspense, useEffect, useRef } from 'react';
import { Sidebar } from './app/Sidebar.tsx';
import { useShell, screenForShortcut } from './lib/shell/index.ts';
import { useRememberedScroll } from './lib/shell/scroll.ts';
import { TopBar } from './app/topbar/TopBar.tsx';
import { useAppEvents } from './app/useAppEvents.ts';
import { useTheme } from './app/useTheme.ts';
import { ComposeScreen } from './features/compose/components/ComposeScreen.tsx';
import { useQueue } from './features/queue/store/index.ts';
import { useSettings } from './stores/settings/index.ts';
import './app/shell.css';
import './app/topbar/topbar.css';

// Compose is the first screen; the others load when first opened, off the startup path.
const QueueScreen = lazy(() =>
  import('./features/queue/components/QueueScreen.tsx').then((m) => ({ default: m.QueueScreen })),
);
const LibraryScreen = lazy(() =>
  import('./features/library/components/LibraryScreen.tsx').then((m) => ({ default: m.LibraryScreen })),
);
const SettingsScreen = lazy(() => import('./app/SettingsScreen.tsx').then((m) => ({ default: m.SettingsScreen })));

function ScreenLoading() {
  return (
    <div className="screen" role="status" aria-label="Loading">
      <div className="skeleton" style={{ height: 32, width: 200 }} />
      <div className="skeleton" style={{ height: 240 }} />
    </div>
  );
}

export function App() {
  const screen = useShell((s) => s.screen);
  const go = useShell((s) => s.go);
  const connected = useSettings((s) => s.connected);
  const error = useSettings((s) => s.error);
  const mainRef = useRef<HTMLElement>(null);
  useRememberedScroll(mainRef, `screen:${screen}`);
  useTheme();
  useAppEvents(connected === true);

  useEffect(() => {
    void useSettings
      .getState()
      .load()
      .then(() => {
        if (useSettings.getState().connected) void useQueue.getState().load();
      });
  }, []);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return;
      const target = screenForShortcut(e.key);
      if (target) {
        e.preventDefault();
        go(target);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [go]);

  return (
    <div className="app">
      <Sidebar />
      <div className="app-column">
        <TopBar />
        <main ref={mainRef} className="main" aria-label="Clipdesk">
          {connected === false && (
            <div className="notice notice-error" role="alert" style={{ margin: '16px 32px 0' }}>
              <span className="grow">Not connected to Clipdesk: {error}</span>
              <button type="button" className="btn btn-small" onClick={() => void useSettings.getState().load()}>
                Reconnect
              </button>
            </div>
          )}
          <Suspense fallback={<ScreenLoading />}>
            {screen === 'compose' && <ComposeScreen />}
            {screen === 'queue' && <QueueScreen />}
            {screen === 'library' && <LibraryScreen />}
            {screen === 'settings' && <SettingsScreen />}
          </Suspense>
        </main>
      </div>
    </div>
  );
}
