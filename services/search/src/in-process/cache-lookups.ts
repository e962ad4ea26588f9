import { Counter, type Registry } from "prom-client";

/** A hit/miss counter for one of the search service's in-process caches; none without a registry. */
export function cacheLookupCounter(registry: Registry | undefined, name: string, help: string): Counter<"outcome"> | undefined {
  return registry ? new Counter({ name, help, labelNames: ["outcome"], registers: [registry] }) : undefined;
}
