/**
 * describe_environment: the memory service's complete report (configuration, registry, counts)
 * with what only the gateway knows (its tools and version) in front. Briefing and handoff need no
 * code here: they call the memory peer as it is.
 */
import type { CallerIdentity } from "@3ngram/rpc";
import type { DescribeEnvironmentOutput } from "@3ngram/schema";
import type { MemoryPeer } from "./memory.js";

/** What the gateway knows about its own MCP surface, which describe_environment reports. */
export interface SurfaceInfo {
  tools: readonly string[];
  version: string;
}

export async function describeEnvironment(memory: MemoryPeer, identity: CallerIdentity, surface: SurfaceInfo): Promise<DescribeEnvironmentOutput> {
  const report = await memory.orientation.describeEnvironment({}, { identity });
  const { tools, version } = surface;
  return { ...report, capabilities: { tools: [...tools], toolCount: tools.length, version, ...report.capabilities } };
}
