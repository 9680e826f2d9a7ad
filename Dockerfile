# syntax=docker/dockerfile:1
# One image for the three processes (issue 22): `node dist/workers/api.js` (the default), `dist/workers/worker.js`,
# `dist/workers/dispatcher.js`, and `dist/db/migrate.js` for the migration Job (deploy/helm/apipay). The build stage
# compiles src/ and prebuilds the workflow bundle; the final stage holds the production dependencies
# (`npm ci --omit=dev`, no tsx or TypeScript, the driver patched from patches/), dist/, drizzle/ and config/ and runs as a non-root user.
# test/integration/image-tree.test.ts builds the final stage's file tree from this file's COPY and RUN lines
# without a container engine and starts each process from it; keep its instructions to the forms it reads.

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# R17: npm ci's postinstall applies patches/ (patch-package) to the driver, so they come before it.
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/build-workflow-bundle.ts ./scripts/build-workflow-bundle.ts
RUN npm run build

FROM node:20-slim
ENV NODE_ENV=production
ENV NODE_OPTIONS=--enable-source-maps
WORKDIR /app
# package.json gives dist/ its "type": "module"; the lock file pins what npm ci installs.
COPY package.json package-lock.json ./
COPY patches ./patches
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY drizzle ./drizzle
COPY config ./config
# The image's `node` user (uid 1000), numeric so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3000 9464 9465
ENTRYPOINT ["node"]
CMD ["dist/workers/api.js"]
