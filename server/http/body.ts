import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors.ts';

/** JSON request bodies are small: prompts and parameters. Uploads take another path (uploads/). */
export const JSON_BODY_LIMIT = 64 * 1024;

/**
 * Reads a JSON body. A declared Content-Length over the limit is refused before a byte is read;
 * a chunked body is counted as it arrives and refused the moment it passes the limit.
 */
export async function readJsonBody(req: IncomingMessage, limit = JSON_BODY_LIMIT): Promise<unknown> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type) && Number(declared ?? 1) > 0) {
    throw new ApiError(
      'unsupported_media_type',
      `request body must be JSON (Content-Type: application/json), not ${type}`,
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim().length === 0)
    throw new ApiError('invalid_request_error', 'request body is empty; send a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ApiError(
      'invalid_request_error',
      `request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError('invalid_request_error', 'request body must be a JSON object');
  }
  return value;
}

function tooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', `request body is larger than ${limit} bytes`);
}
