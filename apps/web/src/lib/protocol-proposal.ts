// The governance proposal encoding and rules the CLI (`npm run gov`) uses, bundled as they are (viem only):
// the page builds and reads proposals exactly as the CLI does. The build's freshness check watches those
// files too (`src/web/web-build.ts`).
export * from "../../../../src/governance/proposal.ts";
export * from "../../../../src/governance/rules.ts";
