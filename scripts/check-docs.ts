// `npm run docs:check`: every relative link in README.md and docs/*.md points at a file that
// exists, and every `#anchor` at a heading of its target page, so a page moved or a heading renamed
// fails CI instead of leaving a dead link (docs/testing.md).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The markdown's lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((text, index) => {
    const marker = /^\s*(```|~~~)/.exec(text)?.[1];
    if (marker !== undefined) {
      if (fence === null) fence = marker;
      else if (fence === marker) fence = null;
      return;
    }
    if (fence === null) out.push({ text, line: index + 1 });
  });
  return out;
}

/** Every anchor a page offers, numbered as GitHub numbers repeated headings (`x`, `x-1`, …). */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Inline links and images, `[text](target)`, without code spans. */
function linksOf(text: string): string[] {
  const prose = text.replace(/`[^`]*`/g, '');
  return [...prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** The broken relative links and anchors of one markdown file. */
export function checkFile(
  file: string,
  readText: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const own = readText(file);
  for (const { text, line } of proseLines(own)) {
    for (const target of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, mailto: … are not ours to check
      const [pathPart = '', anchor] = target.split('#', 2);
      const path = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
      if (!existsSync(path)) {
        broken.push({ file, line, target, reason: 'no such file' });
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (statSync(path).isDirectory() || !path.endsWith('.md')) continue;
      if (!anchorsOf(path === file ? own : readText(path)).has(decodeURIComponent(anchor).toLowerCase()))
        broken.push({ file, line, target, reason: 'no such heading' });
    }
  }
  return broken;
}

/** README.md and docs/*.md of the repository at `root`. */
export function docFiles(root: string): string[] {
  const docs = join(root, 'docs');
  const pages = existsSync(docs)
    ? readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => join(docs, name))
    : [];
  return [join(root, 'README.md'), ...pages];
}

function main(): void {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const files = docFiles(root);
  const broken = files.flatMap((file) => checkFile(file));
  for (const b of broken) console.error(`${relative(root, b.file)}:${b.line}: ${b.target}: ${b.reason}`);
  if (broken.length > 0) {
    console.error(`${broken.length} broken link(s) in ${files.length} files`);
    process.exit(1);
  }
  console.log(`docs: ${files.length} files, every relative link and anchor resolves`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
