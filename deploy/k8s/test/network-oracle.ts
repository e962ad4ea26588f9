/**
 * A small model of NetworkPolicy ingress semantics, enough to ask "may this source open a
 * connection to that pod's port?" of the rendered policies. It follows the Kubernetes rules:
 * a pod no policy selects accepts everything; a selected pod accepts only what some rule of some
 * selecting policy allows; a rule with no `from` admits every source and one with no `ports`
 * every port; podSelector alone means pods of the policy's namespace; namespaceSelector alone
 * means every pod of the matching namespaces; both together mean matching pods in those namespaces.
 */
import type { INetworkPolicySpec } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicySpec";
import type { NetworkPolicyDoc } from "./rendered.js";

type ILabelSelector = INetworkPolicySpec["podSelector"];

export type Source =
  { kind: "pod"; namespace: string; namespaceLabels: Record<string, string>; labels: Record<string, string> } | { kind: "external"; ip: string };

export interface Target {
  namespace: string;
  labels: Record<string, string>;
  port: number;
  /** The container's named ports, for policies that name one. */
  portNames: Record<string, number>;
}

function selectorMatches(selector: ILabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const expression of selector.matchExpressions ?? []) {
    const value = labels[expression.key];
    const values = expression.values ?? [];
    const ok =
      expression.operator === "In"
        ? value !== undefined && values.includes(value)
        : expression.operator === "NotIn"
          ? value === undefined || !values.includes(value)
          : expression.operator === "Exists"
            ? value !== undefined
            : expression.operator === "DoesNotExist"
              ? value === undefined
              : false;
    if (!ok) return false;
  }
  return true;
}

function ipInCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split("/");
  const toInt = (a: string) => a.split(".").reduce((acc, octet) => (acc << 8) + Number(octet), 0) >>> 0;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return (toInt(ip) & mask) >>> 0 === (toInt(base!) & mask) >>> 0;
}

export function allows(policies: NetworkPolicyDoc[], source: Source, target: Target): boolean {
  const selecting = policies.filter(
    (p) =>
      p.metadata.namespace === target.namespace &&
      (p.spec?.policyTypes ?? ["Ingress"]).includes("Ingress") &&
      selectorMatches(p.spec?.podSelector ?? {}, target.labels),
  );
  if (selecting.length === 0) return true;
  return selecting.some((policy) =>
    (policy.spec?.ingress ?? []).some((rule) => {
      const portOk =
        !rule.ports ||
        rule.ports.length === 0 ||
        rule.ports.some((p) => p.port === undefined || (typeof p.port === "number" ? p.port === target.port : target.portNames[p.port] === target.port));
      if (!portOk) return false;
      if (!rule.from || rule.from.length === 0) return true;
      return rule.from.some((peer) => {
        if (peer.ipBlock) {
          return source.kind === "external" && ipInCidr(source.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c) => ipInCidr(source.ip, c));
        }
        if (source.kind !== "pod") return false;
        const namespaceOk = peer.namespaceSelector
          ? selectorMatches(peer.namespaceSelector, source.namespaceLabels)
          : source.namespace === policy.metadata.namespace;
        const podOk = peer.podSelector ? selectorMatches(peer.podSelector, source.labels) : true;
        return namespaceOk && podOk;
      });
    }),
  );
}
