/** What every kubernetes-models object offers: its type, metadata, and validation against the API schema. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  validate(): void;
  toJSON(): unknown;
}
