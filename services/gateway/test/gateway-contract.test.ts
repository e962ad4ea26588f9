import { gatewayContract } from "./support/contract.js";
import { KEYS, startFakePeers } from "./support/fake-peers.js";
import { startTestGateway } from "./support/gateway.js";

gatewayContract("gateway contract (fake peers)", async () => {
  const peers = await startFakePeers();
  const gateway = await startTestGateway(peers);
  return {
    url: gateway.url,
    allowedOrigin: "https://app.example.com",
    keys: { readWrite: KEYS.readWrite, readOnly: KEYS.readOnly, otherTenant: KEYS.otherTenant },
    async close() {
      await gateway.close();
      await peers.close();
    },
  };
});
