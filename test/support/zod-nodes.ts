/** A node of a zod schema: its definition and where it sits ("$.items[]|1.name"). */
export interface ZodNode {
  path: string;
  def: Record<string, unknown>;
}

/**
 * Every node of a zod schema, depth first, each once: through object shapes, array elements,
 * union options, record keys and values, both sides of a pipe and every wrapper's inner type.
 * Tests walk schemas with it to hold an invariant at every depth.
 */
export function zodNodes(schema: unknown, path = "$", seen = new Set<unknown>()): ZodNode[] {
  if (schema === null || typeof schema !== "object" || seen.has(schema)) return [];
  seen.add(schema);
  const def = (schema as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
  if (def === undefined) return [];
  const walk = (child: unknown, at: string) => zodNodes(child, at, seen);
  const here: ZodNode = { path, def };
  switch (def.type) {
    case "object":
      return [here, ...Object.entries(def.shape as Record<string, unknown>).flatMap(([key, child]) => walk(child, `${path}.${key}`))];
    case "array":
      return [here, ...walk(def.element, `${path}[]`)];
    case "union":
      return [here, ...(def.options as unknown[]).flatMap((option, i) => walk(option, `${path}|${i}`))];
    case "record":
      return [here, ...walk(def.keyType, `${path}{key}`), ...walk(def.valueType, `${path}{}`)];
    case "pipe":
      return [here, ...walk(def.in, path), ...walk(def.out, path)];
    case "lazy":
      return [here, ...walk((def.getter as () => unknown)(), path)];
    default:
      return "innerType" in def ? [here, ...walk(def.innerType, path)] : [here];
  }
}
