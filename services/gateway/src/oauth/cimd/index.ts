export { isClientMetadataUrl, type ClientMetadataFetcher } from "./fetcher.js";
export { CIMD_DEFAULTS, MAX_CIMD_REDIRECTS, createClientMetadataFetcher, type ClientMetadataFetcherOptions } from "./create-fetcher.js";
export { isPublicAddress } from "./address-policy.js";
export type { CacheBounds } from "./cache-lifetime.js";
export type { ResolveHost } from "./resolve-host.js";
