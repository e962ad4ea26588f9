// The entry point of `make run`. It does nothing but make sure glibc's malloc arena cap is in
// effect (docs/adr/0036) before loading the server: exec replaces this process, so the server's
// modules are imported only by the image that keeps running.
import { reexecWithArenaCap } from "./malloc-arenas.js";

reexecWithArenaCap();
await import("./server.js");
