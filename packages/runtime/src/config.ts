import { z } from "zod";

export type Env = Record<string, string | undefined>;

/**
 * Parses a service's environment once at boot. Any bad or missing value stops the process with
 * one message listing every offending variable — never a half-configured service.
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: Env = process.env): z.output<S> {
  // Empty strings mean "unset" so `FOO=` in an env file falls back to the default.
  const cleaned: Env = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== "") cleaned[key] = value;
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join(".") || "(env)"}: ${i.message}`);
  throw new ConfigError(problems);
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

/** Common field shapes for env schemas. */
export const envPort = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
export const envBool = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0"])
    .default(fallback ? "true" : "false")
    .transform((v) => v === "true" || v === "1");
export const envLogLevel = z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info");

/** An environment name as a setting's name: GRPC_MAX_CONNECTION_AGE_MS → grpcMaxConnectionAgeMs. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Lowercase<Head>}${Capitalize<CamelCase<Tail>>}` : Lowercase<S>;
export type CamelCaseKeys<T> = { [K in keyof T as K extends string ? CamelCase<K> : K]: T[K] };

/**
 * The parsed environment as settings, by one naming rule for every service: the variable's name in
 * camelCase (SEARCH_DB_ROLE is searchDbRole), so a setting can be found from the variable an
 * operator sets, and back, without a table of renames.
 */
export function camelCaseKeys<T extends Record<string, unknown>>(env: T): CamelCaseKeys<T> {
  const settings: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(env)) {
    settings[name.toLowerCase().replace(/_([a-z0-9])/g, (_, next: string) => next.toUpperCase())] = value;
  }
  return settings as CamelCaseKeys<T>;
}
