import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

import { PERMIT2_ADDRESS } from "@avn/protocol/intents";
import { EAS_PREDEPLOYS, L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { INTENT_MAX_PROOF_AGE, INTENT_SETTLEMENT_WINDOW, PRIMARY_NAME, PRIMARY_SYMBOL } from "./parts/defaults.ts";
import { l2Governance } from "./parts/governance.ts";
import { opIgnitionArtifact } from "./parts/op-artifacts.ts";
import { stakedTokenFuture } from "./parts/staked-token.ts";
import { verificationServices } from "./parts/verification-services.ts";

/**
 * The L2 side. The primary token here is the OP standard bridge's representation of the L1 token
 * (`l1PrimaryToken`, no default), created through the OptimismMintableERC20Factory predeploy, so that
 * the standard bridge mints and burns it on deposits and withdrawals. The staked token is backed by it,
 * and the verification services are wired to both (see `verificationServices`). The governance executor
 * runs what the L1 timelock (`l1Timelock`, no default) sends. The deployer is the initial admin of every
 * contract; the deploy script starts the two-step handover of that role to the executor
 * (`src/deploy/admin-handover.ts`), which accepts it through governance's first proposal.
 * `rewardsFunder` (the treasury, say) receives the reward pools' REWARDS_FUNDER_ROLE. The storage-proof verifier and its
 * L1 block-hash store read the `L1Block` predeploy (docs/proofs.md); they have no admin. The nodes publish
 * their measurements of the service to `QosReports` (no admin, no storage: docs/verification.md). The intent
 * layer's `OriginSettler` escrows fast withdrawals of ETH and the primary token and settles them on storage
 * proofs of the L1 `DestinationSettler` (`l1DestinationSettler`, `l1ChainId`: no defaults); it has no admin, and
 * its timing (`intentSettlementWindow`, `intentMaxProofAge`, seconds) is fixed at deployment (docs/intents.md).
 * Fast deposits (L1 → L2) are filled through `L2DestinationSettler`, which reports its fills to the L1's
 * `L1OriginSettler` (module L1Intents, deployed after this one) through the L2 messenger; no admin, no parameter.
 * `AttestationExporter` exports the verifier's answers to EAS (`eas`: the OP predeploy by default), registering
 * its two schemas there as it is constructed (docs/eas.md); no admin.
 */
export default buildModule("L2", (m) => {
  const l1PrimaryToken = m.getParameter<string>("l1PrimaryToken");
  const factory = m.contractAt(
    "OptimismMintableERC20Factory",
    opIgnitionArtifact("OptimismMintableERC20Factory"),
    L2_PREDEPLOYS.OptimismMintableERC20Factory,
  );
  const creation = m.call(factory, "createOptimismMintableERC20WithDecimals", [
    l1PrimaryToken,
    m.getParameter("primaryName", PRIMARY_NAME),
    m.getParameter("primarySymbol", PRIMARY_SYMBOL),
    18,
  ]);
  const primaryAddress = m.readEventArgument(creation, "OptimismMintableERC20Created", "localToken");
  const primary = m.contractAt("L2PrimaryToken", opIgnitionArtifact("OptimismMintableERC20"), primaryAddress);

  const staked = stakedTokenFuture(m, primary, m.getAccount(0));
  const services = verificationServices(m, primary, staked, m.getParameter("rewardsFunder", m.getAccount(0)));
  const { executor } = l2Governance(m);
  const l1BlockHashes = m.contract("L1BlockHashes", [L2_PREDEPLOYS.L1Block]);
  const storageProofVerifier = m.contract("StorageProofVerifier", [l1BlockHashes, L2_PREDEPLOYS.L1Block]);
  const qosReports = m.contract("QosReports", [services.verificationRegistry]);
  const originSettler = m.contract("OriginSettler", [
    {
      verifier: storageProofVerifier,
      destinationSettler: m.getParameter<string>("l1DestinationSettler"),
      destinationChainId: m.getParameter<bigint>("l1ChainId"),
      inputToken: primary,
      outputToken: l1PrimaryToken,
      permit2: m.getParameter("permit2", PERMIT2_ADDRESS),
      settlementWindow: m.getParameter("intentSettlementWindow", INTENT_SETTLEMENT_WINDOW),
      maxProofAge: m.getParameter("intentMaxProofAge", INTENT_MAX_PROOF_AGE),
    },
  ]);
  const destinationSettler = m.contract("L2DestinationSettler", [L2_PREDEPLOYS.L2CrossDomainMessenger]);
  const attestationExporter = m.contract("AttestationExporter", [services.attestationVerifier, m.getParameter("eas", EAS_PREDEPLOYS.EAS)]);
  return {
    primary,
    staked,
    ...services,
    executor,
    l1BlockHashes,
    storageProofVerifier,
    qosReports,
    originSettler,
    destinationSettler,
    attestationExporter,
  };
});
