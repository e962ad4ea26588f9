import * as grpc from "@grpc/grpc-js";
import { service as healthServiceDefinition } from "grpc-health-check";

export type ServingStatus = "SERVING" | "NOT_SERVING" | "UNKNOWN" | "SERVICE_UNKNOWN" | "UNREACHABLE";

const HealthClient = grpc.makeGenericClientConstructor(healthServiceDefinition as grpc.ServiceDefinition, "Health");

/** Asks a peer's standard gRPC health service on a connection of its own; an unreachable peer answers "UNREACHABLE". */
export function checkHealth(address: string, service = "", deadlineMs = 2_000): Promise<ServingStatus> {
  return askHealth(new HealthClient(address, grpc.credentials.createInsecure()), service, deadlineMs);
}

/**
 * Asks the health service over an existing channel: the answer then says whether the connection
 * that serves requests works, not merely whether the peer could be reached from scratch.
 */
export function checkHealthOn(channel: grpc.ChannelInterface, service = "", deadlineMs = 2_000): Promise<ServingStatus> {
  // The address is unused when a channel is given; the client never closes a channel it did not make.
  return askHealth(new HealthClient("unused", grpc.credentials.createInsecure(), { channelOverride: channel }), service, deadlineMs, false);
}

function askHealth(client: grpc.Client, service: string, deadlineMs: number, close = true): Promise<ServingStatus> {
  return new Promise((resolve) => {
    (client as unknown as { check: (...args: unknown[]) => unknown }).check(
      { service },
      { deadline: Date.now() + deadlineMs },
      (err: grpc.ServiceError | null, response: { status?: string | number } | undefined) => {
        if (close) client.close();
        if (err) return resolve(err.code === grpc.status.NOT_FOUND ? "SERVICE_UNKNOWN" : "UNREACHABLE");
        const status = response?.status;
        resolve(status === "SERVING" || status === 1 ? "SERVING" : status === "NOT_SERVING" || status === 2 ? "NOT_SERVING" : "UNKNOWN");
      },
    );
  });
}
