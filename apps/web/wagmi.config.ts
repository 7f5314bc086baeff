// ABIs for the web app, generated from the compiled artifacts (never written by hand): the project's
// contracts (governance's governor, timelock and L2 executor included; the credits channel's claim
// platform and, for the errors a claim can meet, the example game it mints for) from Hardhat's
// `artifacts/` (run `npm run build` at the root first) and the OP standard bridges, the portal and the
// output oracle from the pinned `@eth-optimism/contracts-bedrock` release the devnet runs. The
// cross-domain messengers' few functions and events come from `packages/protocol/src/governance/proposal.ts`, which the
// Governance page shares with the CLI.
import { defineConfig } from "@wagmi/cli";
import { foundry, hardhat } from "@wagmi/cli/plugins";

export default defineConfig({
  out: "src/generated/abis.ts",
  plugins: [
    hardhat({
      project: "../..",
      include: [
        "PrimaryToken.json",
        "StakedToken.json",
        "NodeLicense.json",
        "NodeRegistry.json",
        "VerificationRegistry.json",
        "ProtocolGovernor.json",
        "ProtocolTimelock.json",
        "GovernanceExecutor.json",
        "VoucherClaims.json",
        "GameItem.json",
      ],
      commands: { build: false, clean: false, rebuild: false },
    }),
    foundry({
      artifacts: "../../node_modules/@eth-optimism/contracts-bedrock/forge-artifacts",
      include: ["L1StandardBridge.json", "L2StandardBridge.json", "OptimismPortal.json", "L2OutputOracle.json"],
      forge: { build: false, clean: false, rebuild: false },
    }),
  ],
});
