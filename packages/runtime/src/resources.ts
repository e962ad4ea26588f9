/** Closes one thing a service opened. */
export type Release = () => Promise<void> | void;

/** Registers how to close a resource just opened; the last one registered is closed first. */
export type Defer = (release: Release) => void;

/**
 * Builds a service from resources opened one after another, and gives it one `close()` that
 * releases them in the reverse order they were opened: a server stops taking calls before the
 * relay it feeds, the relay before its queue, the queue before the pool. A resource opened late
 * depends on those opened before it, so the reverse order never closes something still in use.
 *
 * If `build` throws, what it opened so far is released (quietly: the first error is the one
 * worth reporting) and the error propagates. `close()` runs every release even when one fails,
 * then throws the first failure; every later `close()`, even one made while the first still runs,
 * answers that same outcome (a signal and a caller may both ask to stop).
 */
export async function composeService<T extends object>(build: (defer: Defer) => Promise<T>): Promise<T & { close(): Promise<void> }> {
  const releases: Release[] = [];
  const releaseAll = async (): Promise<void> => {
    let failure: unknown;
    while (releases.length > 0) {
      const release = releases.pop()!;
      try {
        await release();
      } catch (err) {
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
  };
  try {
    const service = await build((release) => releases.push(release));
    let closing: Promise<void> | undefined;
    return Object.assign(service, { close: () => (closing ??= releaseAll()) });
  } catch (err) {
    await releaseAll().catch(() => {});
    throw err;
  }
}
