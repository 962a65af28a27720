# gwapi: the read API and its operator CLI. docker-compose.yml runs it as `migrate` and as the api replicas.
#
#   docker build -t gwapi .
#   docker run --rm -e DATABASE_URL=postgres://… gwapi migrate
#   docker run -d -e DATABASE_URL=postgres://… -e REDIS_URL=redis://… -p 3000:3000 gwapi
#
# The image always runs against DATABASE_URL: the embedded PostgreSQL of `gwapi serve`/`gwapi demo`
# without DATABASE_URL is for development and is not installed here.

# Node 24 LTS, the runtime CI tests on (.ci/run) and package.json `engines` requires; move all three to a
# newer LTS together (test/deploy/dockerfile.test.ts checks they agree).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# --- build: compile TypeScript with the dev dependencies ---------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: compiling needs none (and `prepare` would build before the sources are here).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# --- runtime: production dependencies, compiled code and migrations ----------------------------------
FROM ${NODE_IMAGE} AS runtime
# No heap options here: gwapi bounds V8's heap itself when it starts (src/heap.ts, their one source),
# here as with npx or npm start. NODE_OPTIONS set at `docker run` overrides them flag by flag.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional leaves out embedded-postgres's server binaries (~60 MB) and --ignore-scripts its install
# step: with DATABASE_URL set, nothing imports them (src/commands/database.ts loads them lazily).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
  && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY sql ./sql
# Code and dependencies stay owned by root: the service cannot change them.
USER node
EXPOSE 3000
# Liveness only (the process answers); readiness (database, Redis, schema) is the load balancer's check.
# Node's own fetch: slim images have no curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live', { signal: AbortSignal.timeout(2000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["serve"]
