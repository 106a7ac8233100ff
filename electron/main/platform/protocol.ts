import type { Protocol } from 'electron';
import { serveLocalMedia, type MediaRoots } from '../../app/local-media.ts';
import { serveAppFile, splitMediaUrl } from '../app-files.ts';
import { APP_SCHEME, MEDIA_SCHEME } from '../security/origin.ts';

type ProtocolLike = Pick<Protocol, 'handle' | 'registerSchemesAsPrivileged'>;

/** Before app 'ready': both schemes are standard and secure; media streams (Range) and is fetchable. */
export function registerSchemes(protocol: Pick<Protocol, 'registerSchemesAsPrivileged'>): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
    { scheme: MEDIA_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, stream: true } },
  ]);
}

/** After 'ready': the renderer's files and local media. `file://` is never used. */
export function handleProtocols(protocol: ProtocolLike, staticDir: string, roots: MediaRoots): void {
  protocol.handle(APP_SCHEME, (request) => serveAppFile(staticDir, request.url));
  protocol.handle(MEDIA_SCHEME, async (request) => {
    const parts = splitMediaUrl(request.url);
    if (!parts) return new Response('Not found', { status: 404 });
    return serveLocalMedia(roots, parts.root, parts.rest, request.method, request.headers.get('range'));
  });
}
