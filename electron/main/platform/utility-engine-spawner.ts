import { engineEnv, type EngineChild, type EngineSpawner } from '../../core/engine/index.ts';

/**
 * The Local engine as an Electron utility process. The packaged app's RunAsNode fuse is off
 * (electron-builder.yml), so child_process.fork cannot run Node there; a utility process is
 * Electron's way to run a Node child of main. It is killed with the app; its channel carries the
 * same messages as a Node child's (electron/core/engine/protocol.ts).
 */
export interface UtilityProcessLike {
  readonly pid: number | undefined;
  postMessage(message: unknown): void;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  once(event: 'exit', listener: (code: number) => void): unknown;
  kill(): boolean;
}

export interface UtilityProcessApi {
  fork(
    modulePath: string,
    args?: string[],
    options?: { serviceName?: string; stdio?: 'inherit' | 'pipe' | 'ignore'; env?: NodeJS.ProcessEnv },
  ): UtilityProcessLike;
}

export function utilityEngineSpawner(utilityProcess: UtilityProcessApi): EngineSpawner {
  return (entry) => {
    // An explicit environment, as for a Node child: not main's keys or passphrase (docs/security.md).
    const child = utilityProcess.fork(entry, [], {
      serviceName: 'Clipdesk Local engine',
      stdio: 'inherit',
      env: engineEnv(),
    });
    let exitCode: number | null | undefined;
    child.once('exit', (code) => (exitCode = code));
    const spawned: EngineChild = {
      get pid() {
        return child.pid;
      },
      send: (m) => {
        if (exitCode === undefined) child.postMessage(m);
      },
      onMessage: (l) => void child.on('message', l),
      onExit: (l) => {
        if (exitCode !== undefined) l(exitCode);
        else child.once('exit', (code) => l(code));
      },
      kill: () => {
        if (exitCode === undefined) child.kill();
      },
    };
    return spawned;
  };
}
