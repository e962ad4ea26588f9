import { CredentialSigner, generateServiceKeyPair, type ServiceKeyPair } from "@3ngram/rpc";

export interface TestKeys {
  pair: ServiceKeyPair;
  signingJwk: string;
  trustedJwks: string;
  signer(issuer: string): Promise<CredentialSigner>;
}

/** A fresh service signing key pair, in the env-variable forms the services read. */
export async function createTestKeys(): Promise<TestKeys> {
  const pair = await generateServiceKeyPair();
  return {
    pair,
    signingJwk: JSON.stringify(pair.privateJwk),
    trustedJwks: JSON.stringify([pair.publicJwk]),
    signer: (issuer) => CredentialSigner.fromJwk(issuer, pair.privateJwk),
  };
}
