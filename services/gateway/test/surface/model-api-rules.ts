/**
 * What the model APIs that MCP clients forward tool definitions to accept, as far as it can be
 * checked offline. A client passes each tool's name and input schema on as they are, and one
 * refused tool fails every request of the session (or silently disappears), so the surface is
 * held to the strictest rule known for each construct:
 *
 * - root: Anthropic (and so Claude Code, Bedrock, Vertex) refuses oneOf/anyOf/allOf at the top
 *   level; every API wants a plain object with properties.
 * - names: Anthropic and OpenAI allow [a-zA-Z0-9_-]{1,64}; Gemini also wants a letter or an
 *   underscore first.
 * - nesting: Gemini's function declarations take one `type` per node (no type lists), no
 *   `const`, no `$ref`/`$defs`, enums of strings only, and a type on every property; OpenAI
 *   refuses an array without `items` and (strict mode) oneOf/allOf/not/if. anyOf stays allowed
 *   below the root, which both accept.
 */
type Json = Record<string, unknown>;

const TOOL_NAME_RULE = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

const ROOT_COMPOSITION = ["oneOf", "anyOf", "allOf", "not", "if", "then", "else", "enum", "const", "$ref"];
const NESTED_FORBIDDEN = ["oneOf", "allOf", "not", "if", "then", "else", "const", "$ref", "$defs", "definitions"];

/** Every rule a tool breaks, as "<path>: <rule>"; empty when every model API would take it. */
export function modelApiProblems(tool: { name: string; inputSchema: unknown }): string[] {
  const problems: string[] = [];
  if (!TOOL_NAME_RULE.test(tool.name)) problems.push(`name: must match ${TOOL_NAME_RULE}`);
  const root = tool.inputSchema;
  if (root === null || typeof root !== "object" || Array.isArray(root)) return [...problems, "$: must be an object schema"];
  const node = root as Json;
  if (node.type !== "object") problems.push('$: type must be "object"');
  if (node.properties === null || typeof node.properties !== "object") problems.push("$: must declare properties");
  if (node.additionalProperties !== false) problems.push("$: additionalProperties must be false");
  for (const key of ROOT_COMPOSITION) if (key in node) problems.push(`$: no ${key} at the root`);
  walk(node, "$", problems);
  return problems;
}

function walk(node: Json, path: string, problems: string[]): void {
  for (const key of NESTED_FORBIDDEN) if (key in node && path !== "$") problems.push(`${path}: no ${key}`);
  if (Array.isArray(node.type)) problems.push(`${path}: type must be one name, not a list`);
  if (node.type === "array" && (node.items === null || typeof node.items !== "object")) problems.push(`${path}: an array needs items`);
  if (node.enum !== undefined) {
    const values = node.enum;
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === "string")) problems.push(`${path}: enum must list strings`);
    if (node.type !== "string") problems.push(`${path}: an enum needs type "string"`);
  }
  if (node.type === "object") {
    const properties = node.properties;
    if (properties === null || typeof properties !== "object") problems.push(`${path}: an object needs properties`);
    else {
      const declared = Object.keys(properties as Json);
      for (const name of (node.required as unknown[] | undefined) ?? []) {
        if (typeof name !== "string" || !declared.includes(name)) problems.push(`${path}: required names an undeclared ${String(name)}`);
      }
      for (const [name, sub] of Object.entries(properties as Json)) {
        const child = sub as Json;
        const typed = typeof child.type === "string" || (Array.isArray(child.anyOf) && child.anyOf.every((b) => typeof (b as Json).type === "string"));
        if (!typed) problems.push(`${path}.${name}: a property needs a type`);
        walk(child, `${path}.${name}`, problems);
      }
    }
  }
  if (node.items !== null && typeof node.items === "object" && !Array.isArray(node.items)) walk(node.items as Json, `${path}[]`, problems);
  if (Array.isArray(node.anyOf)) node.anyOf.forEach((branch, i) => walk(branch as Json, `${path}/anyOf[${i}]`, problems));
}
