// ABIs for the web app, generated from the compiled artifacts (never written by hand): the project's
// contracts (governance's governor, timelock and L2 executor included; the credits channel's claim
// platform and, for the errors a claim can meet, the example game it mints for) from Hardhat's
// `artifacts/` (run `npm run build` at the root first) and the OP standard bridges, the portal and the
// output oracle from the pinned `@eth-optimism/contracts-bedrock` release the devnet runs. The
// cross-domain messengers' few functions and events come from `packages/protocol/src/governance/proposal.ts`, which the
// Governance page shares with the CLI.
//
// A second file, `src/generated/op-abis.ts`, holds the OP Bedrock contracts only the explorer decodes with
// (the messengers, the message passer, the L1 block and fee oracles, the token factory, the ERC-721 bridges,
// the system config): in their own module, they stay in the explorer's lazy chunk instead of growing the
// ABI module every page loads. A third, `src/generated/intent-abis.ts`, holds the intent layer's settlers
// (`OriginSettler` on the L2, `DestinationSettler` on L1, and fast deposits' `L1OriginSettler` and
// `L2DestinationSettler`, whose reads are the other two's and whose settlement and report are their own),
// which only the Bridge page's fast orders and the explorer use, for the same reason.
import { defineConfig } from "@wagmi/cli";
import { foundry, hardhat } from "@wagmi/cli/plugins";

export default defineConfig([
  {
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
          "RewardPools.json",
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
  },
  {
    out: "src/generated/intent-abis.ts",
    plugins: [
      hardhat({
        project: "../..",
        include: ["OriginSettler.json", "DestinationSettler.json", "L1OriginSettler.json", "L2DestinationSettler.json"],
        commands: { build: false, clean: false, rebuild: false },
      }),
    ],
  },
  {
    out: "src/generated/op-abis.ts",
    plugins: [
      foundry({
        artifacts: "../../node_modules/@eth-optimism/contracts-bedrock/forge-artifacts",
        include: [
          "L1CrossDomainMessenger.json",
          "L2CrossDomainMessenger.json",
          "L2ToL1MessagePasser.json",
          "L1Block.json",
          "GasPriceOracle.json",
          "OptimismMintableERC20Factory.json",
          "OptimismMintableERC20.json",
          "L1ERC721Bridge.json",
          "L2ERC721Bridge.json",
          "SystemConfig.json",
          "SuperchainConfig.json",
        ],
        forge: { build: false, clean: false, rebuild: false },
      }),
    ],
  },
]);
