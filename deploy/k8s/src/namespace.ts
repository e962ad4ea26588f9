import { Namespace } from "kubernetes-models/v1/Namespace";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import type { KubeObject } from "./kube-object.js";
import { NAMESPACE, PART_OF } from "./settings.js";

export function namespaceObjects(): KubeObject[] {
  return [
    new Namespace({ metadata: { name: NAMESPACE, labels: { "app.kubernetes.io/part-of": PART_OF } } }),
    // Every pod in the namespace refuses connections unless a policy below lets them in.
    new NetworkPolicy({
      metadata: { name: "default-deny-ingress", namespace: NAMESPACE, labels: { "app.kubernetes.io/part-of": PART_OF } },
      spec: { podSelector: {}, policyTypes: ["Ingress"] },
    }),
  ];
}
