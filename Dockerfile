# The production image: compiled app and production dependencies only, run as a non-root user.
#   podman build -t slack-approvals .          (or docker build)
#   BASE_IMAGE: any image with Node 24 or 26 (the default is the official Node 26 LTS slim one, on
#   Debian trixie).
ARG BASE_IMAGE=docker.io/library/node:26-trixie-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /app
# No compiler: better-sqlite3 ships its prebuilt binaries inside the package.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-assets.mjs scripts/bundle.mjs scripts/start.mjs ./scripts/
COPY src ./src
# npm prune leaves the emptied scope folders of dev packages behind; they go too.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund \
  && find node_modules -mindepth 1 -maxdepth 1 -type d -empty -delete

FROM ${BASE_IMAGE}
WORKDIR /app
# PORT is what Slack (through the load balancer) reaches: /slack/events only. The probes and
# /metrics are on ADMIN_PORT, on every interface of the container so the orchestrator and
# Prometheus can reach it; publish only PORT to the outside.
ENV NODE_ENV=production PORT=3000 ADMIN_PORT=9091 ADMIN_HOST=0.0.0.0 \
    DATABASE_URL=/app/data/approvals.db
# The operator commands (`npm run announcements`, `backup`, `migrate`, `accounts`, `delegations`,
# `report`, `people`) run the compiled dist/ here
# through scripts/start.mjs, which builds nothing where there is no src/. npm asks no registry.
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
COPY --from=build /app/package.json ./
COPY --from=build /app/scripts/start.mjs ./scripts/
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# A numeric user, so it works on bases without a passwd entry for it; it owns only the data folder.
RUN mkdir -p /app/data && chown 1000:1000 /app/data
USER 1000:1000
EXPOSE 3000 9091
# /healthz is on ADMIN_PORT, or on PORT when a deployment unsets ADMIN_PORT.
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.ADMIN_PORT || process.env.PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The same V8 setting as `npm start` (package.json): a young generation of at most 8 MB per half,
# which keeps a sweep's memory flat (bench/README) at no measurable CPU cost.
# Node's cache of compiled code (a restart loads the app in a fraction of the time); /tmp is
# writable even with a read-only root filesystem (deploy/kubernetes mounts an emptyDir there).
ENV NODE_COMPILE_CACHE=/tmp/node-compile-cache
CMD ["node", "--max-semi-space-size=8", "dist/main.js"]
