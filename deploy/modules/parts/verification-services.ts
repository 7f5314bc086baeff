import type { IgnitionModuleBuilder, NamedArtifactContractDeploymentFuture } from "@nomicfoundation/ignition-core";

import type { AdminArgument, TokenFuture } from "./types.js";

const DAY = 24n * 60n * 60n;
const E18 = 10n ** 18n;

/**
 * The node licenses (sold for `primary`), the node registry and the verification registry, wired to
 * `staked`: the verification registry gets the staked token's PROTOCOL_ROLE (the allowlist of contracts
 * that may hold staked tokens: collateral escrow, fee burns) and the node registry's RECORDER_ROLE (vote
 * statistics); `rewardsFunder` gets REWARDS_FUNDER_ROLE; the attestation verifier (no admin of its own) gets
 * the verification registry's ATTESTATION_ROLE, to record verified attestations there. The grants are made by the deployment's account
 * 0, which therefore must hold the admin role of `staked` and is the initial admin of the three new
 * contracts; a deployment for governance then hands the admin role over (`src/deploy/admin-handover.ts`).
 */
export function verificationServices(
  m: IgnitionModuleBuilder,
  primary: TokenFuture,
  staked: NamedArtifactContractDeploymentFuture<"StakedToken">,
  rewardsFunder: AdminArgument,
) {
  const deployer = m.getAccount(0);
  const adminTransferDelay = m.getParameter("adminTransferDelay", 3n * DAY);

  const license = m.contract("NodeLicense", [
    m.getParameter("licenseName", "Verification Node License"),
    m.getParameter("licenseSymbol", "VNODE"),
    primary,
    m.getParameter("treasury", deployer),
    m.getParameter("licenseMaxSupply", 50_000n),
    m.getParameter("licensePriceTiers", [
      { upToSupply: 1_000n, price: 1_000n * E18 },
      { upToSupply: 10_000n, price: 2_000n * E18 },
      { upToSupply: 50_000n, price: 5_000n * E18 },
    ]),
    deployer,
    adminTransferDelay,
  ]);

  const nodeRegistry = m.contract("NodeRegistry", [
    license,
    m.getParameter("livenessWindow", 10n * 60n),
    m.getParameter("quorum", 2n),
    deployer,
    adminTransferDelay,
  ]);

  m.call(license, "setNodeRegistry", [nodeRegistry], { id: "NodeLicense_setNodeRegistry" });

  const verificationRegistry = m.contract("VerificationRegistry", [
    staked,
    nodeRegistry,
    m.getParameter("epochDuration", 7n * DAY),
    m.getParameter("requestFee", 10n * E18),
    m.getParameter("jobTimeout", 60n * 60n),
    deployer,
    adminTransferDelay,
  ]);

  const protocolRole = m.staticCall(staked, "PROTOCOL_ROLE");
  m.call(staked, "grantRole", [protocolRole, verificationRegistry], { id: "StakedToken_grantProtocolRole" });
  const recorderRole = m.staticCall(nodeRegistry, "RECORDER_ROLE");
  m.call(nodeRegistry, "grantRole", [recorderRole, verificationRegistry], { id: "NodeRegistry_grantRecorderRole" });
  const funderRole = m.staticCall(verificationRegistry, "REWARDS_FUNDER_ROLE");
  m.call(verificationRegistry, "grantRole", [funderRole, rewardsFunder], { id: "VerificationRegistry_grantFunderRole" });

  const attestationVerifier = m.contract("AttestationVerifier", [verificationRegistry]);
  const attestationRole = m.staticCall(verificationRegistry, "ATTESTATION_ROLE");
  m.call(verificationRegistry, "grantRole", [attestationRole, attestationVerifier], { id: "VerificationRegistry_grantAttestationRole" });

  return { license, nodeRegistry, verificationRegistry, attestationVerifier };
}
