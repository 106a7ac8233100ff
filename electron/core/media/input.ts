import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { MediaToolError } from './errors.ts';

/** Checks what can be checked without ffmpeg and returns the absolute path. */
export async function checkInput(op: string, input: string): Promise<string> {
  if (typeof input !== 'string' || input.length === 0)
    throw new MediaToolError('invalid_argument', `${op}: no input file given`);
  const path = resolve(input);
  const name = basename(path);
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new MediaToolError('input_missing', `${op}: ${name} does not exist`);
  }
  if (!info.isFile()) throw new MediaToolError('input_not_file', `${op}: ${name} is not a file`);
  if (info.size === 0) throw new MediaToolError('input_empty', `${op}: ${name} is empty (0 bytes)`);
  return path;
}

export function checkOutput(op: string, output: string): string {
  if (typeof output !== 'string' || output.length === 0)
    throw new MediaToolError('invalid_argument', `${op}: no output file given`);
  return resolve(output);
}
