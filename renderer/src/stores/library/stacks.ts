/**
 * A source take and the variations made of it, shown as one stack: the Library's stack tile and
 * the canvas filmstrip's column are both made by `stackVariations` (docs/workflows.md, "The Library").
 */
export interface Stack<T> {
  /** The source: the stack's cover. */
  cover: T;
  /** Its variations (and theirs), in the order the list had them. */
  variations: T[];
}

export interface StackKeys<T> {
  /** The take's own item id; null for one not finished yet (it can be no one's source). */
  id: (take: T) => string | null;
  /** The item it is a variation of, or null. */
  sourceOf: (take: T) => string | null;
}

/**
 * Stacks every variation under its source when the source is in `list` too (a variation of a
 * variation goes under the first source), else the variation stands on its own. Stacks keep the
 * place of their source; everything keeps the list's order. One pass and a map: linear, so the
 * Library can run it over every loaded item as pages arrive.
 */
export function stackVariations<T>(list: readonly T[], keys: StackKeys<T>): Stack<T>[] {
  const byId = new Map<string, T>();
  for (const take of list) {
    const id = keys.id(take);
    if (id !== null && !byId.has(id)) byId.set(id, take);
  }
  const rootOf = (take: T): T => {
    const first = keys.sourceOf(take);
    if (first === null || !byId.has(first)) return take;
    let root = take;
    const seen = new Set<T>([take]);
    for (;;) {
      const sourceId = keys.sourceOf(root);
      const source = sourceId === null ? undefined : byId.get(sourceId);
      if (source === undefined) return root;
      // A lineage that loops (bad data) stacks nothing: each of its takes stands on its own.
      if (seen.has(source)) return take;
      seen.add(source);
      root = source;
    }
  };
  const stacks = new Map<T, Stack<T>>();
  const roots = list.map(rootOf);
  for (const [i, take] of list.entries()) if (roots[i] === take) stacks.set(take, { cover: take, variations: [] });
  for (const [i, take] of list.entries()) if (roots[i] !== take) stacks.get(roots[i]!)!.variations.push(take);
  return [...stacks.values()];
}
