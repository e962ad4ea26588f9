/**
 * /health answers without I/O (the process is up); /ready asks each gRPC peer's health service over
 * the channel that serves its requests and answers 503 naming the peers that are not serving, so a
 * load balancer stops sending traffic. The routes themselves are in rest/operational.ts.
 */
import type { ServingStatus } from "@3ngram/rpc";
import type { ReadinessOutput } from "@3ngram/schema";

export type PeerChecks = Record<string, () => Promise<ServingStatus>>;

/** Every peer asked at once; one that does not answer counts as unreachable. */
export async function readiness(peers: PeerChecks): Promise<{ status: 200 | 503; body: ReadinessOutput }> {
  const entries = await Promise.all(
    Object.entries(peers).map(async ([name, check]) => [name, await check().catch((): ServingStatus => "UNREACHABLE")] as const),
  );
  const notServing = entries.filter(([, status]) => status !== "SERVING").map(([name]) => name);
  const peerStatus = Object.fromEntries(entries);
  if (notServing.length === 0) return { status: 200, body: { status: "ready", peers: peerStatus } };
  return { status: 503, body: { status: "not_ready", notServing, peers: peerStatus } };
}
