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
export class UrlSigner {
  private readonly secret: Buffer;
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
    return hmacBase64Url(this.secret, message);
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
