import * as grpc from "@grpc/grpc-js";
import { service as healthServiceDefinition } from "grpc-health-check";

export type ServingStatus = "SERVING" | "NOT_SERVING" | "UNKNOWN" | "SERVICE_UNKNOWN" | "UNREACHABLE";

const HealthClient = grpc.makeGenericClientConstructor(healthServiceDefinition as grpc.ServiceDefinition, "Health");

/** Asks a peer's standard gRPC health service; an unreachable peer answers "UNREACHABLE". */
export function checkHealth(address: string, service = "", deadlineMs = 2_000): Promise<ServingStatus> {
  const client = new HealthClient(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    (client as unknown as { check: Function }).check(
      { service },
      { deadline: Date.now() + deadlineMs },
      (err: grpc.ServiceError | null, response: { status?: string | number } | undefined) => {
        client.close();
        if (err) return resolve(err.code === grpc.status.NOT_FOUND ? "SERVICE_UNKNOWN" : "UNREACHABLE");
        const status = response?.status;
        resolve(status === "SERVING" || status === 1 ? "SERVING" : status === "NOT_SERVING" || status === 2 ? "NOT_SERVING" : "UNKNOWN");
      },
    );
  });
}
