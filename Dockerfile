# syntax=docker/dockerfile:1
# Production image of the pet store service. npm run image builds it with
# Podman (scripts/image/) and npm run test:system -- image drives the built image
# (test/image/); see docs/deploying.md.
# Node 24 is the current LTS line; the service also runs on 20.19+ and 22.12+.

FROM node:24-bookworm-slim AS build
# os-lock (the embedded database's data directory lock) is a native addon that
# node-gyp compiles during npm ci: a compiler, make and python3, against the
# headers this image's Node.js ships in /usr/local/include (none downloaded):
# node-gyp reads its options from npm_package_config_node_gyp_* variables
# (npm itself warns about an unknown npm_config_nodedir, and its next major
# stops passing it on).
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
ENV npm_package_config_node_gyp_nodedir=/usr/local
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && rm dist/.tsbuildinfo && npm prune --omit=dev
# What the packages ship for their own authors and nobody reads at run time:
# source maps (node runs without --enable-source-maps) and type declarations.
# They are 29 of the 80 MB that npm ci --omit=dev writes (docs/deploying.md).
# The service's own dist/*.map stay: its stack traces are the ones worth mapping.
RUN find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete

FROM node:24-bookworm-slim AS runtime
# Both listeners on every address of the container's own network: the API for
# its clients, the metrics for the scraper (published or not, as the operator
# decides). Not for --network=host, where these would be the host's addresses.
ENV HOST=0.0.0.0 \
    PORT=3000 \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9464 \
    DATA_DIR=/app/data
WORKDIR /app
COPY package.json package-lock.json ./
# The production dependencies, the addon compiled: no compiler in this image.
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Read at run time, resolved relative to dist/ (see src/openapi/files.ts).
COPY openapi.yaml pets.arazzo.yaml ./
COPY migrations ./migrations
# Node.js (22.1+) keeps the compiled code of the modules it loads in
# NODE_COMPILE_CACHE: a restarted container does not compile them again
# (460 -> 430 ms from spawn to the first 200 on Node 24, npm run bench -- cold).
ENV NODE_COMPILE_CACHE=/app/.cache/node-compile
RUN mkdir -p /app/data /app/.cache/node-compile && chown node:node /app/data /app/.cache/node-compile
USER node
EXPOSE 3000 9464
# Only used with the embedded database; with DATABASE_URL it stays empty.
VOLUME ["/app/data"]
# The check gives up after 2 s on its own: Docker enforces --timeout, but
# Podman 4.3 does not, and a check of a hung server would never end.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz',{signal:AbortSignal.timeout(2000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node itself is PID 1 so that SIGTERM reaches the graceful shutdown in src/server.ts.
CMD ["node", "dist/server.js"]
