# The circuit node. Build from the repository root:  docker build -t avn-node .
# Run:  docker run -v "$PWD/cache:/app/cache" -e OWNERS_ALLOWLIST=0x… -e L2_RPC_URLS=… -e L2_WS_URL=… \
#         -e VERIFICATION_REGISTRY=0x… -e EVM_RPC_URLS=… -e SOLANA_RPC_URLS=… avn-node
# The burner key and the node's journal live in /app/cache: keep that volume (its loss means a new burner
# to delegate to and fund). The node needs no inbound port; set NODE_HEALTH_PORT (and
# NODE_HEALTH_HOST=0.0.0.0) to expose /healthz and /metrics.

# The base image of every stage: the official Node 22 slim image. `npm run image:node` passes a Node 22 base it
# made locally (Debian bookworm from debootstrap, Node from the npm registry) where no image registry is reachable.
ARG NODE_IMAGE=node:22-slim

# Build stage: compile the contracts for their ABIs (the node reads artifacts/), with all dependencies.
FROM ${NODE_IMAGE} AS build
WORKDIR /build
COPY package.json package-lock.json ./
COPY packages/bridge/package.json packages/bridge/
COPY packages/contracts/package.json packages/contracts/
COPY packages/protocol/package.json packages/protocol/
COPY packages/sdk/package.json packages/sdk/
COPY apps/web/package.json apps/web/
# The root's packages and @avn/protocol's: the other workspaces (web app, bridge, SDK) play no part in the
# contracts' build. --prefer-offline: package metadata a mounted npm cache holds is not fetched again (the lockfile
# names no tarball URLs, so npm reads each package's metadata; without a cache it fetches it as usual).
RUN npm ci --ignore-scripts --no-audit --no-fund --prefer-offline --workspace=@avn/protocol --include-workspace-root
COPY hardhat.config.ts tsconfig.json ./
COPY contracts contracts
# The public interfaces and AttestationConsumer (@avn/contracts): a source folder of the build, named by remappings.txt.
COPY packages/contracts packages/contracts
COPY remappings.txt ./
# The ABIs are what the node reads: no TypeChain types (erased at run time).
RUN npx hardhat build --no-typechain

# Runtime dependencies only (no Hardhat, no anvil, no Solidity compiler): the root's and @avn/protocol's, not
# the web app's, the bridge's (ethers v5, the OP SDK) nor the SDK's. Files Node never loads are deleted in the
# same step, so no layer holds them: type declarations, source maps, TypeScript sources (Node does not strip
# types under node_modules; @avn/protocol is a link to packages/protocol, which find does not follow) and
# Markdown. That halves node_modules (viem alone ships 66 MB, most of it declarations, maps and sources). And
# TypeScript (20 MB): a peer dependency of the @solana/* packages for their types, never loaded at run time.
FROM ${NODE_IMAGE} AS dependencies
WORKDIR /build
COPY package.json package-lock.json ./
COPY packages/bridge/package.json packages/bridge/
COPY packages/contracts/package.json packages/contracts/
COPY packages/protocol/package.json packages/protocol/
COPY packages/sdk/package.json packages/sdk/
COPY apps/web/package.json apps/web/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --workspace=@avn/protocol --include-workspace-root \
 && find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o -name '*.md' \) -delete \
 && rm -rf node_modules/typescript

FROM ${NODE_IMAGE}
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
# The shared protocol package (node_modules/@avn/protocol links to it).
COPY packages/protocol/package.json packages/protocol/
COPY packages/protocol/src packages/protocol/src
# The image's own non-root user; the cache volume is the only place it writes.
RUN mkdir -p /app/cache && chown node:node /app/cache
USER node
VOLUME /app/cache
# The young generation at a fixed size: src/common/service-v8-flags.ts says why (keep the two alike).
CMD ["node", "--disable-warning=ExperimentalWarning", "--min-semi-space-size=16", "--max-semi-space-size=16", "scripts/node.ts"]
