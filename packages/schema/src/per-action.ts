import { z } from "zod";

/** One variant of a per-action input: a strict object whose `key` is a literal naming the action. */
type ActionVariant<K extends string> = z.ZodObject<{ [P in K]: z.ZodLiteral<string> } & z.ZodRawShape>;

/** Strips the wrappers that only matter once the action is known (defaults, optional, null). */
function baseOf(schema: z.ZodType): z.ZodType {
  let current: z.ZodType = schema;
  for (;;) {
    if (current instanceof z.ZodDefault || current instanceof z.ZodOptional || current instanceof z.ZodNullable) {
      current = current.unwrap() as z.ZodType;
    } else return current;
  }
}

/** The default a variant gives a field, if any (advertised so a model knows what omitting it means). */
function defaultOf(schema: z.ZodType): unknown {
  let current: z.ZodType = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable) current = current.unwrap() as z.ZodType;
  return current instanceof z.ZodDefault ? (current.def.defaultValue as unknown) : undefined;
}

const quoted = (values: readonly string[]) => values.map((v) => `"${v}"`).join(", ");

/**
 * An input that does one of several actions (or kinds), advertised as ONE plain object: `key` is
 * an enum and every other field of every action is an optional property at the root. Model APIs
 * refuse tool schemas whose root is a oneOf/anyOf/allOf, which is what a discriminated union
 * becomes, and several also refuse them nested. The server still holds each action to its own
 * strict variant: a field the action does not take is named as not accepted, a missing one as
 * required, and the variant's defaults and refinements apply. The output is the variant's.
 *
 * A field shared by several actions must use the same schema in each (defaults aside). Each
 * property's description says which actions take it.
 */
export function perActionInput<K extends string, const V extends readonly [ActionVariant<K>, ...ActionVariant<K>[]]>(
  key: K,
  variants: V,
): z.ZodType<z.output<V[number]>, Record<string, unknown>> {
  const byAction = new Map<string, ActionVariant<K>>();
  const fields = new Map<string, { base: z.ZodType; actions: string[]; defaultValue: unknown }>();
  for (const variant of variants) {
    const action = (variant.shape[key] as z.ZodLiteral<string>).value;
    byAction.set(action, variant);
    for (const [name, field] of Object.entries(variant.shape)) {
      if (name === key) continue;
      const base = baseOf(field as z.ZodType);
      const known = fields.get(name);
      if (known === undefined) fields.set(name, { base, actions: [action], defaultValue: defaultOf(field as z.ZodType) });
      else if (known.base !== base) throw new TypeError(`perActionInput: field ${name} has different schemas in different actions`);
      else known.actions.push(action);
    }
  }
  const actions = [...byAction.keys()] as [string, ...string[]];
  const properties: Record<string, z.ZodType> = { [key]: z.enum(actions) };
  for (const [name, { base, actions: takers, defaultValue }] of fields) {
    const used = `With ${key} ${quoted(takers)}.`;
    const description = base.description ? `${base.description} ${used}` : used;
    // A null default only means "absent"; advertising it would contradict the property's single type.
    const advertised = defaultValue === undefined || defaultValue === null ? {} : { default: defaultValue };
    properties[name] = base.optional().meta({ description, ...advertised });
  }

  return z.strictObject(properties).transform((value, ctx) => {
    const action = value[key] as string;
    const variant = byAction.get(action);
    if (variant === undefined) return z.NEVER; // the enum has already named the problem
    const present = Object.keys(value).filter((name) => value[name] !== undefined);
    const refused = present.filter((name) => !Object.hasOwn(variant.shape, name));
    for (const name of refused) ctx.addIssue({ code: "custom", path: [name], message: `not accepted with ${key} "${action}"` });
    if (refused.length > 0) return z.NEVER;
    const parsed = variant.safeParse(Object.fromEntries(present.map((name) => [name, value[name]])));
    if (parsed.success) return parsed.data as z.output<V[number]>;
    for (const issue of parsed.error.issues) {
      const [first] = issue.path;
      const missing = issue.code === "invalid_type" && issue.path.length === 1 && typeof first === "string" && value[first] === undefined;
      ctx.addIssue({ code: "custom", path: issue.path, message: missing ? `required with ${key} "${action}"` : issue.message });
    }
    return z.NEVER;
  }) as unknown as z.ZodType<z.output<V[number]>, Record<string, unknown>>;
}
