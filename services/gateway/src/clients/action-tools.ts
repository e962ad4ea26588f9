/**
 * What the tools that take one `action` per call over a registry share (configure_scope over the
 * scopes, review_proposals over the proposals), on MCP, REST and the review UI alike.
 */
import { SCOPES, type CallerIdentity, type Scope } from "@3ngram/rpc";
import type { MemoryPeer } from "./memory.js";

/** Who runs the action, and the peer it runs on: an MCP tool's context is one. */
export interface ActionContext {
  memory: MemoryPeer;
  identity: CallerIdentity;
}

/** `list` only reads the registry; every other action changes it. */
export function actionAccess(input: { action: string }): Scope {
  return input.action === "list" ? SCOPES.read : SCOPES.write;
}
