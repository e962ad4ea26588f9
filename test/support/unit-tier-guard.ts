/**
 * Holds the unit tier (vitest.config.ts) to its promise: a unit test opens no socket and starts no
 * child process, so `npm run test:unit` runs in seconds with nothing running. Loaded before every
 * unit test file; a test that reaches for the network or a process fails, saying to move it to
 * the integration tier (`*.int.test.ts`). Worker threads stay allowed (the model pool runs in them).
 */
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";

function refuse(what: string): never {
  throw new Error(`a unit test ${what}; name the file *.int.test.ts to run it in the integration tier`);
}

net.Socket.prototype.connect = function connect(): never {
  refuse("opened a socket");
};
net.Server.prototype.listen = function listen(): never {
  refuse("listened on a socket");
};
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const) {
  (childProcess as unknown as Record<string, unknown>)[name] = () => refuse(`started a child process (${name})`);
}
// ESM imports of node:child_process (`import { spawn } from …`) read these bindings: update them.
syncBuiltinESMExports();
