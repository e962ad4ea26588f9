// Prints a fresh Ed25519 key pair for service credentials, as the two environment variables the
// services read: the private key for callers (gateway, consolidator), the public set for servers
// (memory, search). Distributed mode needs one pair per deployment; standalone makes its own.
// Needs a build first (`make build`).
import { generateServiceKeyPair } from "@3ngram/rpc";

const { privateJwk, publicJwk } = await generateServiceKeyPair(`svc-${new Date().toISOString().slice(0, 10)}`);
console.log(`SERVICE_SIGNING_JWK='${JSON.stringify(privateJwk)}'`);
console.log(`SERVICE_TRUSTED_JWKS='${JSON.stringify([publicJwk])}'`);
