import type { IgnitionModuleBuilder, NamedArtifactContractDeploymentFuture } from "@nomicfoundation/ignition-core";

import {
  ADMIN_TRANSFER_DELAY,
  DISPUTE_PERIOD,
  EPOCH_DURATION,
  JOB_TIMEOUT,
  LICENSE_MAX_SUPPLY,
  LICENSE_NAME,
  LICENSE_PRICE_TIERS,
  LICENSE_SYMBOL,
  LIVENESS_WINDOW,
  QUORUM,
  REQUEST_FEE,
  SETTLEMENT_DELAY,
} from "./defaults.ts";
import type { AdminArgument, TokenFuture } from "./types.ts";

/**
 * The node licenses (sold for `primary`), the node registry and the verification registry, wired to
 * `staked`: the verification registry gets the staked token's PROTOCOL_ROLE (the allowlist of contracts
 * that may hold staked tokens: collateral escrow, fee burns) and the node registry's RECORDER_ROLE (vote
 * statistics); the reward pools (epoch rewards split by quality of service) read the verification registry's
 * epochs, and `rewardsFunder` gets their REWARDS_FUNDER_ROLE; the attestation verifier (no admin of its own) gets
 * the verification registry's ATTESTATION_ROLE, to record verified attestations there. The grants are made by the deployment's account
 * 0, which therefore must hold the admin role of `staked` and is the initial admin of the four new
 * contracts; a deployment for governance then hands the admin role over (`src/deploy/admin-handover.ts`).
 */
export function verificationServices(
  m: IgnitionModuleBuilder,
  primary: TokenFuture,
  staked: NamedArtifactContractDeploymentFuture<"StakedToken">,
  rewardsFunder: AdminArgument,
) {
  const deployer = m.getAccount(0);
  const adminTransferDelay = m.getParameter("adminTransferDelay", ADMIN_TRANSFER_DELAY);

  const license = m.contract("NodeLicense", [
    m.getParameter("licenseName", LICENSE_NAME),
    m.getParameter("licenseSymbol", LICENSE_SYMBOL),
    primary,
    m.getParameter("treasury", deployer),
    m.getParameter("licenseMaxSupply", LICENSE_MAX_SUPPLY),
    m.getParameter(
      "licensePriceTiers",
      LICENSE_PRICE_TIERS.map((tier) => ({ ...tier })),
    ),
    deployer,
    adminTransferDelay,
  ]);

  const nodeRegistry = m.contract("NodeRegistry", [
    license,
    m.getParameter("livenessWindow", LIVENESS_WINDOW),
    m.getParameter("quorum", QUORUM),
    deployer,
    adminTransferDelay,
  ]);

  m.call(license, "setNodeRegistry", [nodeRegistry], { id: "NodeLicense_setNodeRegistry" });

  const verificationRegistry = m.contract("VerificationRegistry", [
    staked,
    nodeRegistry,
    m.getParameter("epochDuration", EPOCH_DURATION),
    m.getParameter("requestFee", REQUEST_FEE),
    m.getParameter("jobTimeout", JOB_TIMEOUT),
    deployer,
    adminTransferDelay,
  ]);

  const protocolRole = m.staticCall(staked, "PROTOCOL_ROLE");
  m.call(staked, "grantRole", [protocolRole, verificationRegistry], { id: "StakedToken_grantProtocolRole" });
  const recorderRole = m.staticCall(nodeRegistry, "RECORDER_ROLE");
  m.call(nodeRegistry, "grantRole", [recorderRole, verificationRegistry], { id: "NodeRegistry_grantRecorderRole" });

  const rewardPools = m.contract("RewardPools", [
    verificationRegistry,
    m.getParameter("settlementDelay", SETTLEMENT_DELAY),
    m.getParameter("disputePeriod", DISPUTE_PERIOD),
    deployer,
    adminTransferDelay,
  ]);
  const funderRole = m.staticCall(rewardPools, "REWARDS_FUNDER_ROLE");
  m.call(rewardPools, "grantRole", [funderRole, rewardsFunder], { id: "RewardPools_grantFunderRole" });

  const attestationVerifier = m.contract("AttestationVerifier", [verificationRegistry]);
  const attestationRole = m.staticCall(verificationRegistry, "ATTESTATION_ROLE");
  m.call(verificationRegistry, "grantRole", [attestationRole, attestationVerifier], { id: "VerificationRegistry_grantAttestationRole" });

  return { license, nodeRegistry, verificationRegistry, rewardPools, attestationVerifier };
}
