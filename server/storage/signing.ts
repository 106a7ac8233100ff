import { constantTimeEqual, hmacBase64Url } from '../../shared/node/hash.ts';

/**
 * What a file URL grants. `expires` (Unix seconds) is null for URLs that never expire (public
 * items); `owner` says the URL was issued to the item's owner, so a complete download through it
 * counts as the owner's download (retention exemption).
 */
export interface FileGrant {
  expires: number | null;
  owner: boolean;
}

/**
 * Signed URLs. File URLs work without a bearer key (a `<video src>` cannot send one), so the
 * signature is the capability; it binds the expiry and the owner mark, so neither can be edited.
 * Upload URLs also bind the declared size and an expiry.
 */
const RECENT_SIGNATURES = 20_000;

export class UrlSigner {
  private readonly secret: Buffer;
  /**
   * File signatures computed lately, by message. Every item of a `/media` page gets three to five
   * signed URLs, and an HMAC costs ~2 µs: signing was a third of the service's own work per page.
   * The same pages are listed again and again (the app's sync, a creator scrolling back), and a
   * URL's expiry only moves once per 24th of its lifetime, so most messages repeat. Bounded, so a
   * crawl over every item cannot grow it.
   */
  private readonly recent = new Map<string, string>();

  constructor(secret: Buffer) {
    this.secret = secret;
  }

  fileSignature(mediaId: string, file: string, grant: FileGrant): string {
    // A non-owner URL that never expires keeps the original message, so public URLs handed out
    // before expiring URLs existed stay valid.
    const message =
      grant.expires === null && !grant.owner
        ? `file\n${mediaId}\n${file}`
        : `file\n${mediaId}\n${file}\n${grant.expires ?? 'never'}\n${grant.owner ? 'owner' : 'viewer'}`;
    let signature = this.recent.get(message);
    if (signature === undefined) {
      signature = hmacBase64Url(this.secret, message);
      if (this.recent.size >= RECENT_SIGNATURES) this.recent.delete(this.recent.keys().next().value!);
      this.recent.set(message, signature);
    }
    return signature;
  }

  verifyFile(mediaId: string, file: string, grant: FileGrant, signature: string): boolean {
    return constantTimeEqual(this.fileSignature(mediaId, file, grant), signature);
  }

  uploadSignature(uploadId: string, size: number, expiresUnix: number): string {
    return hmacBase64Url(this.secret, `upload\n${uploadId}\n${size}\n${expiresUnix}`);
  }

  verifyUpload(uploadId: string, size: number, expiresUnix: number, signature: string): boolean {
    return constantTimeEqual(this.uploadSignature(uploadId, size, expiresUnix), signature);
  }
}
