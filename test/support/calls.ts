import { expect } from "vitest";
import { AppError } from "@3ngram/errors";
import { SCOPES, type CallOptions } from "@3ngram/rpc";

export interface TestTenant {
  tenantId: string;
  userId: string;
  apiKey: string;
}

/** Call options acting for a tenant's user with read and write scopes. */
export const writer = (t: Pick<TestTenant, "tenantId" | "userId">): CallOptions => ({
  identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read, SCOPES.write] },
});

/** Call options acting for a tenant's user with the read scope only. */
export const reader = (t: Pick<TestTenant, "tenantId" | "userId">): CallOptions => ({
  identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read] },
});

/** Awaits a call that must fail and returns its AppError (failing the test if it succeeded or threw something else). */
export async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}
