import { readFileSync, readdirSync } from 'node:fs';

/** Linux /proc views of processes, for tests that check that no child outlives its parent. */

/** ffmpeg processes whose command line holds `marker`, not counting zombies (they are dead). */
export function liveFfmpegWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (name !== 'ffmpeg' || stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** Alive in the kernel's eyes and not a zombie waiting to be reaped. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

export async function waitUntil(check: () => boolean, capMs: number): Promise<boolean> {
  const step = 25;
  for (let waited = 0; waited < capMs; waited += step) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, step));
  }
  return check();
}

/** Every live process below `root` in the process tree, with its name (from /proc). */
export function descendants(root: number): Array<{ pid: number; name: string }> {
  const parent = new Map<number, number>();
  const name = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      name.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close));
      parent.set(Number(entry), Number(stat.slice(close + 2).split(' ')[1]));
    } catch {
      // Gone while we looked.
    }
  }
  const below = (pid: number): boolean => {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  return [...name].filter(([pid]) => below(pid)).map(([pid, n]) => ({ pid, name: n }));
}

/** ffmpeg processes below `root` in the process tree (the watchdog shell sits in between). */
export function ffmpegDescendants(root: number): number[] {
  return descendants(root)
    .filter((p) => p.name === 'ffmpeg')
    .map((p) => p.pid);
}
