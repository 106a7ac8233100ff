import { constantTimeEqual, hmacBase64Url } from '../../shared/node/hash.ts';

/**
 * Signed URLs. File URLs work without a bearer key (a `<video src>` cannot send one), so the
 * signature is the capability; upload URLs also bind the declared size and an expiry.
 */
export class UrlSigner {
  private readonly secret: Buffer;
  constructor(secret: Buffer) {
    this.secret = secret;
  }

  fileSignature(mediaId: string, file: string): string {
    return hmacBase64Url(this.secret, `file\n${mediaId}\n${file}`);
  }

  verifyFile(mediaId: string, file: string, signature: string): boolean {
    return constantTimeEqual(this.fileSignature(mediaId, file), signature);
  }

  uploadSignature(uploadId: string, size: number, expiresUnix: number): string {
    return hmacBase64Url(this.secret, `upload\n${uploadId}\n${size}\n${expiresUnix}`);
  }

  verifyUpload(uploadId: string, size: number, expiresUnix: number, signature: string): boolean {
    return constantTimeEqual(this.uploadSignature(uploadId, size, expiresUnix), signature);
  }
}
