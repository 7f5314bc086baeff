# The circuit node. Build from the repository root:  docker build -t avn-node .
# Run:  docker run -v "$PWD/cache:/app/cache" -e OWNERS_ALLOWLIST=0x… -e L2_RPC_URLS=… -e L2_WS_URL=… \
#         -e VERIFICATION_REGISTRY=0x… -e EVM_RPC_URLS=… -e SOLANA_RPC_URLS=… avn-node
# The burner key and the node's journal live in /app/cache: keep that volume (its loss means a new burner
# to delegate to and fund). The node needs no inbound port; set NODE_HEALTH_PORT (and
# NODE_HEALTH_HOST=0.0.0.0) to expose /healthz and /metrics.

# Build stage: compile the contracts for their ABIs (the node reads artifacts/), with all dependencies.
FROM node:22-slim AS build
WORKDIR /build
COPY package.json package-lock.json ./
COPY packages/bridge/package.json packages/bridge/
COPY packages/contracts/package.json packages/contracts/
COPY packages/protocol/package.json packages/protocol/
COPY packages/sdk/package.json packages/sdk/
COPY apps/web/package.json apps/web/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY hardhat.config.ts tsconfig.json ./
COPY contracts contracts
# The public interfaces and AttestationConsumer (@avn/contracts): a source folder of the build, named by remappings.txt.
COPY packages/contracts packages/contracts
COPY remappings.txt ./
RUN npx hardhat build

# Runtime dependencies only (no Hardhat, no anvil, no Solidity compiler).
FROM node:22-slim AS dependencies
WORKDIR /build
COPY package.json package-lock.json ./
COPY packages/bridge/package.json packages/bridge/
COPY packages/contracts/package.json packages/contracts/
COPY packages/protocol/package.json packages/protocol/
COPY packages/sdk/package.json packages/sdk/
COPY apps/web/package.json apps/web/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:22-slim
ENV NODE_ENV=production \
    NODE_CACHE_DIR=/app/cache
WORKDIR /app
COPY --from=dependencies /build/node_modules node_modules
COPY --from=build /build/artifacts/contracts artifacts/contracts
COPY package.json ./
COPY scripts/node.ts scripts/
COPY src/node src/node
COPY src/chains src/chains
COPY src/common src/common
COPY src/op/predeploys.ts src/op/
# The shared protocol package (node_modules/@avn/protocol links to it).
COPY packages/protocol/package.json packages/protocol/
COPY packages/protocol/src packages/protocol/src
# The image's own non-root user; the cache volume is the only place it writes.
RUN mkdir -p /app/cache && chown node:node /app/cache
USER node
VOLUME /app/cache
CMD ["node", "--disable-warning=ExperimentalWarning", "scripts/node.ts"]
