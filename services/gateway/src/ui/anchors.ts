/**
 * Where one version of a memory is shown with what changed in it: an element on the memory page
 * named by the version's id, which never changes, so a link to it (from the Facts page, or pasted
 * by a person) keeps pointing at the same version however the lineage grows.
 */
export function versionAnchor(memoryId: string): string {
  return `version-${memoryId}`;
}

/** The version's own memory page, scrolled to its change. */
export function versionHref(memoryId: string): string {
  return `/ui/memories/${memoryId}#${versionAnchor(memoryId)}`;
}
