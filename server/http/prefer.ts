/**
 * RFC 7240 `Prefer`: whether the request prefers `respond-async`. The header may repeat and list
 * several preferences (`respond-async, wait=10; x=y`), each a token with an optional value and
 * parameters; tokens are case-insensitive and those the service does not know are ignored.
 */
export function prefersAsync(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const values = Array.isArray(header) ? header : [header];
  return values.some((value) =>
    splitOutsideQuotes(value, ',').some((preference) => {
      const [first = ''] = splitOutsideQuotes(preference, ';');
      const token = first.split('=')[0]?.trim().toLowerCase();
      return token === 'respond-async';
    }),
  );
}

/** Splits on `separator` except inside double-quoted strings (values may be quoted, RFC 7230). */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '\\') {
      current += c + (text[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === separator && !quoted) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}
