import type { GeneratedItem } from '../../shared/api/index.ts';

/**
 * How the CLI names a media item of the embedded Local engine in anything that outlives the run
 * (stdout, `--json`, sidecars): `clipdesk-media:<id>`. The engine listens on a new ephemeral port
 * each run, so its URLs are dead once the command exits; the id, resolved by the engine in the
 * same data folder, is not. Every command that takes a media id also takes this form.
 */
export const MEDIA_REF_SCHEME = 'clipdesk-media:';

export function mediaRef(id: string): string {
  return `${MEDIA_REF_SCHEME}${id}`;
}

/** The id in a `clipdesk-media:<id>` reference, or the text itself when it is a bare id; else null. */
export function mediaIdFrom(text: string): string | null {
  const id = text.startsWith(MEDIA_REF_SCHEME) ? text.slice(MEDIA_REF_SCHEME.length) : text;
  // Ids are opaque tokens; anything with a path separator or a dot is a file name, not an id.
  return /^[A-Za-z0-9_-]{1,200}$/.test(id) ? id : null;
}

/**
 * An item as the CLI prints it. On the embedded engine its `url` becomes the item's reference and
 * the URLs that have no stable equivalent (thumbnail, renditions) are dropped; a remote service's
 * URLs stay as they are.
 */
export function portableItem(item: Pick<GeneratedItem, 'id' | 'url'>, local: boolean): Record<string, unknown> {
  if (!local) return item;
  const { thumbnailUrl: _thumbnail, formats, ...rest } = item as Partial<GeneratedItem>;
  return {
    ...rest,
    url: mediaRef(item.id),
    ...(formats ? { formats: formats.map(({ url: _url, ...f }) => f) } : {}),
  };
}
