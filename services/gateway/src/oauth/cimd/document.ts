import { issuePath } from "@3ngram/errors";
import { clientMetadataDocumentSchema, type ClientMetadataDocument } from "@3ngram/schema";
import { refused } from "./errors.js";

// Members a metadata document must not carry (draft §4.1): there is no way to agree a shared
// secret with a client that registers by publishing a document.
const FORBIDDEN_MEMBERS = ["client_secret", "client_secret_expires_at"] as const;

/**
 * Turns the bytes of a fetched Client ID Metadata Document into a validated document whose
 * client_id is exactly `clientId`. Refusals name the failing member but never repeat its value.
 */
export function parseClientMetadataDocument(body: Uint8Array, clientId: string): ClientMetadataDocument {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    throw refused("metadata document is not valid UTF-8");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the input, so it is not passed on.
    throw refused("metadata document is not valid JSON");
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw refused("metadata document is not a JSON object");
  const members = json as Record<string, unknown>;

  for (const name of FORBIDDEN_MEMBERS) {
    if (Object.hasOwn(members, name)) throw refused(`metadata document must not contain ${name}`);
  }
  // Compare before the schema runs, so a document for another client is reported as that.
  if (typeof members.client_id !== "string") throw refused("metadata document has no client_id string");
  if (members.client_id !== clientId) throw refused("metadata document's client_id does not match the URL it was fetched from");

  // The shared schema narrows grant and response types to the supported ones.
  const parsed = clientMetadataDocumentSchema.safeParse(members);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue === undefined ? "document" : issuePath(issue) || "document";
    throw refused(`metadata document member ${field} is invalid: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}
