/**
 * The environment a child process is given: an explicit list of variables, never the parent's
 * whole environment. The parent may hold CLIPDESK_KEY_PASSPHRASE, CLIPDESK_API_KEY and the
 * providers' keys (FAL_KEY, …); a child that is handed them can leak them (a crash report, a
 * core dump, another process of the same user reading /proc/PID/environ) and needs none of them
 * (docs/security.md, "Keys without an OS keychain").
 */

/**
 * What any program needs to run as the user: where to find programs and write temporary files,
 * the locale and time zone (ffmpeg's messages and drawtext), fontconfig (drawtext's fonts), and
 * Windows' own variables without which a process cannot start or find its profile.
 */
const BASE_VARIABLES = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LANG',
  'LANGUAGE',
  'TZ',
  'FONTCONFIG_FILE',
  'FONTCONFIG_PATH',
  'SYSTEMROOT',
  'WINDIR',
  'COMSPEC',
  'PATHEXT',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
] as const;

/** Variables that are part of the base by prefix: the locale's categories (LC_ALL, LC_CTYPE, …). */
const BASE_PREFIXES = ['LC_'] as const;

/**
 * `env`'s values of the base variables plus `extra` names (and names starting with one of
 * `extraPrefixes`), and nothing else. Names are compared case-insensitively, as Windows does.
 */
export function childEnv(
  extra: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
  extraPrefixes: readonly string[] = [],
): NodeJS.ProcessEnv {
  const names = new Set([...BASE_VARIABLES, ...extra].map((n) => n.toUpperCase()));
  const prefixes = [...BASE_PREFIXES, ...extraPrefixes].map((p) => p.toUpperCase());
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const upper = name.toUpperCase();
    if (names.has(upper) || prefixes.some((p) => upper.startsWith(p))) out[name] = value;
  }
  return out;
}

/** For ffmpeg, ffprobe and the shells that supervise them: the base, nothing more. */
export function toolEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return childEnv([], env);
}
