import { createMemoryQueueBackend } from "../src/index.js";
import { describeQueueBackend } from "./queue-backend-suite.js";

describeQueueBackend("in-process", () => createMemoryQueueBackend());
