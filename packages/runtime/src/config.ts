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
