import { describe, expect, it } from 'vitest';
import { isBlobKey } from '../../../../server/storage/blobs/index.ts';
import {
  newPutId,
  newUploadId,
  receivedUploadKey,
  uploadPrefix,
  uploadPutKey,
} from '../../../../server/storage/layout.ts';

describe('the keys of an upload’s received bodies', () => {
  it('each PUT has a key of its own under the upload’s prefix, a valid storage key', () => {
    const id = newUploadId();
    const [one, two] = [uploadPutKey(id, newPutId()), uploadPutKey(id, newPutId())];
    expect(one).not.toBe(two);
    for (const key of [one, two]) {
      expect(key.startsWith(uploadPrefix(id))).toBe(true);
      expect(isBlobKey(key)).toBe(true);
    }
    expect(() => uploadPutKey(id, '../data')).toThrow(/not a PUT id/);
    expect(() => uploadPutKey('upl_nope', newPutId())).toThrow(/not an upload id/);
  });

  it('the key a row records is used; a row that records none is where every PUT stored before', () => {
    const id = newUploadId();
    const key = uploadPutKey(id, newPutId());
    expect(receivedUploadKey(id, key)).toBe(key);
    expect(receivedUploadKey(id, null)).toBe(`uploads/${id}/data`);
  });

  it('a recorded key that is not one of this upload’s PUTs’ is refused (null): nothing reads or deletes by it', () => {
    const id = newUploadId();
    const put = newPutId();
    expect(receivedUploadKey(id, uploadPutKey(newUploadId(), put))).toBeNull();
    expect(receivedUploadKey(id, `uploads/${id}/data`)).toBeNull();
    expect(receivedUploadKey(id, `uploads/${id}/put-${put}/../../../media/x`)).toBeNull();
    expect(receivedUploadKey(id, `media/med_${put}/image.png`)).toBeNull();
    expect(receivedUploadKey('upl_nope', null)).toBeNull();
  });
});
