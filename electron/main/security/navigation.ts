import { checkExternalUrl } from '../../app/external-url.ts';
import { isAppUrl } from './origin.ts';

/**
 * What happens when the page tries to leave: navigation inside the app stays (same origin only),
 * everything else is denied; an http(s) link that passes the external-URL gate opens in the
 * user's browser instead.
 */
export type NavigationDecision = { allow: true } | { allow: false; openExternally: string | null };

export function decideNavigation(url: string): NavigationDecision {
  if (isAppUrl(url)) return { allow: true };
  const check = checkExternalUrl(url);
  return { allow: false, openExternally: check.ok ? check.url : null };
}

/** New windows are never created; an allowed link opens externally. */
export function decideWindowOpen(url: string): { openExternally: string | null } {
  const check = checkExternalUrl(url);
  return { openExternally: check.ok ? check.url : null };
}
