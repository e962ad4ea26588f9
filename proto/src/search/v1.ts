// The search.v1 package as one import, shaped like memory.v1's: the messages, and its one service
// by the name callers use for it, so a search peer is built the same way as a memory peer.
export * from "../gen/search/v1/search_pb.js";

import { SearchService } from "../gen/search/v1/search_pb.js";

/** Every service the search server serves, by the name its callers use for it (@3ngram/schema searchContracts). */
export const searchServices = { search: SearchService } as const;
