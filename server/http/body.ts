import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors.ts';

/** JSON request bodies are small: prompts and parameters. Uploads take another path (uploads/). */
const JSON_BODY_LIMIT = 64 * 1024;

/**
 * Deepest nesting of arrays and objects a JSON body may have (the body object itself is level 1).
 * Requests need 2 or 3; the bound keeps JSON.parse, zod and the idempotency fingerprint's
 * JSON.stringify from recursing into a stack overflow on a hostile body.
 */
export const JSON_MAX_DEPTH = 32;

/**
 * Reads a JSON body. A declared Content-Length over the limit is refused before a byte is read;
 * a chunked body is counted as it arrives and refused the moment it passes the limit, without
 * reading on (see stopReading).
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
  const text = (await readLimited(req, limit)).toString('utf8');
  if (text.trim().length === 0)
    throw new ApiError('invalid_request_error', 'request body is empty; send a JSON object');
  if (jsonDepth(text) > JSON_MAX_DEPTH) {
    throw new ApiError('invalid_request_error', `request body nests deeper than ${JSON_MAX_DEPTH} levels`);
  }
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

/** Reads a body as bytes (a provider's signed webhook is verified over exactly these), 413 past `limit`. */
export async function readRawBody(req: IncomingMessage, limit = JSON_BODY_LIMIT): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  return readLimited(req, limit);
}

/** Reads and drops an optional, unused body, refused with 413 (not read on) past `limit`. */
export async function discardBody(req: IncomingMessage, limit = JSON_BODY_LIMIT): Promise<void> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
  await readLimited(req, limit, false);
}

/** The body, refused with 413 as soon as it passes `limit`. */
function readLimited(req: IncomingMessage, limit: number, keep = true): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error: Error | null): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      if (error) reject(error);
      else resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        stopReading(req);
        done(tooLarge(limit));
      } else if (keep) chunks.push(chunk);
    };
    const onEnd = (): void => done(null);
    const onError = (error: Error): void => done(error);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
}

/**
 * A body refused part-way: read no more of it. The request stays paused (it is not destroyed,
 * which would take the socket and the refusal with it); the router answers with
 * `Connection: close` and closes the socket a moment after the answer (linger.ts), so the client
 * gets the error instead of the server draining whatever it still sends.
 */
export function stopReading(req: IncomingMessage): void {
  req.pause();
  req.unpipe();
}

/**
 * The deepest nesting of `[`/`{` in a JSON text, counted by a scan that skips strings (so it
 * costs no recursion whatever the input). Invalid JSON is left for JSON.parse to describe.
 */
function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

function tooLarge(limit: number): ApiError {
  return new ApiError('payload_too_large', `request body is larger than ${limit} bytes`);
}
