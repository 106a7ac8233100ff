/**
 * A small JSON parser that remembers where every value starts, so that an error in an operator's
 * catalog file — bad syntax, or a value the schema refuses — can name the file's line and column.
 * JSON.parse's own messages differ between Node versions (20 says "at position N", 22 adds a line
 * and column, and some errors carry no position at all), so positions are computed here.
 */

export interface Position {
  line: number;
  column: number;
}

export class JsonSyntaxError extends Error {
  readonly position: Position;
  constructor(message: string, position: Position) {
    super(message);
    this.name = 'JsonSyntaxError';
    this.position = position;
  }
}

export interface ParsedJson {
  value: unknown;
  /** Where the value at a path starts (path segments joined by '\u0000'); see positionOf. */
  positions: Map<string, number>;
  text: string;
}

const PATH_SEP = '\u0000';

export function parseJsonWithPositions(text: string): ParsedJson {
  const positions = new Map<string, number>();
  let i = 0;

  const fail = (message: string, at = i): never => {
    throw new JsonSyntaxError(message, lineColumn(text, at));
  };
  const skipWhitespace = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const describe = (at: number) => (at >= text.length ? 'end of file' : `'${text[at] ?? ''}'`);

  const parseString = (): string => {
    const start = i;
    i++; // opening quote
    while (i < text.length) {
      const c = text[i];
      if (c === '\\') i += 2;
      else if (c === '"') break;
      else if (c === '\n' || c === '\r') fail('unterminated string');
      else i++;
    }
    if (i >= text.length) fail('unterminated string', start);
    i++; // closing quote
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail('invalid escape in string', start);
    }
  };

  const parseValue = (path: string[]): unknown => {
    skipWhitespace();
    positions.set(path.join(PATH_SEP), i);
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      skipWhitespace();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        skipWhitespace();
        if (text[i] !== '"') fail(`expected a property name in double quotes, found ${describe(i)}`);
        const keyAt = i;
        const key = parseString();
        skipWhitespace();
        if (text[i] !== ':') fail(`expected ':' after property name, found ${describe(i)}`);
        i++;
        const value = parseValue([...path, key]);
        // Where a property's name is is a better place to point at than where its value starts.
        positions.set([...path, key].join(PATH_SEP), keyAt);
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
        skipWhitespace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return out;
        }
        fail(`expected ',' or '}' after a property value, found ${describe(i)}`);
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      skipWhitespace();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(parseValue([...path, String(out.length)]));
        skipWhitespace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return out;
        }
        fail(`expected ',' or ']' after an array element, found ${describe(i)}`);
      }
    }
    if (c === '"') return parseString();
    const literal = /^(?:true|false|null)/.exec(text.slice(i, i + 5));
    if (literal) {
      i += literal[0].length;
      return literal[0] === 'null' ? null : literal[0] === 'true';
    }
    const number = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 64));
    if (number) {
      i += number[0].length;
      return Number(number[0]);
    }
    return fail(`unexpected ${describe(i)}`);
  };

  const value = parseValue([]);
  skipWhitespace();
  if (i < text.length) fail(`unexpected ${describe(i)} after the end of the JSON value`);
  return { value, positions, text };
}

/** The line and column (1-based) of the value at `path`, or of its nearest ancestor that has one. */
export function positionOf(parsed: ParsedJson, path: ReadonlyArray<PropertyKey>): Position {
  const parts = path.map(String);
  for (let n = parts.length; n >= 0; n--) {
    const at = parsed.positions.get(parts.slice(0, n).join(PATH_SEP));
    if (at !== undefined) return lineColumn(parsed.text, at);
  }
  return { line: 1, column: 1 };
}

export function lineColumn(text: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let k = 0; k < end; k++) {
    if (text[k] === '\n') {
      line++;
      lineStart = k + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}
