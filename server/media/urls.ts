import type { ServiceContext } from '../context.ts';
import type { UrlMaker } from '../storage/media-repo.ts';

/** Signed, key-less file URLs under `/v1/files/` (what a `<video src>` or a CDN would use). */
export function fileUrls(ctx: ServiceContext): UrlMaker {
  const origin = ctx.origin();
  return {
    fileUrl: (mediaId, file) => `${origin}/v1/files/${mediaId}/${file}?sig=${ctx.signer.fileSignature(mediaId, file)}`,
  };
}
