import { parseAbi } from "viem";

import { ATTESTATION_EXPORTER_ABI } from "@avn/protocol/eas";

/**
 * The part of `AttestationVerifier` (`@avn/contracts/interfaces/IAttestationVerifier.sol`) the SDK calls, with
 * every custom error a check or a recording can revert with, so that viem decodes a revert to its name.
 * Written out here rather than imported from the build's artifacts: the package ships without them, and
 * the structs' field order is the pinned EIP-712 types' (a test calls the deployed contract with it).
 */
export const attestationVerifierAbi = parseAbi([
  "struct BalanceAttestation { uint8 chain; bytes32 owner; bytes32 asset; uint256 balance; bytes32 queryResultHash; uint64 sourceBlock; uint64 issuedAt; }",
  "struct ConditionAttestation { bytes32 conditionHash; bytes32 ownersHash; bool verdict; uint64 ethereumBlock; uint64 solanaSlot; uint64 issuedAt; }",
  "struct NodeSignature { address signer; uint256[] licenseIds; bytes signature; }",

  "function hashAttestation(BalanceAttestation attestation, uint256[] licenseIds) view returns (bytes32)",
  "function isAttestationValid(BalanceAttestation attestation, NodeSignature[] signatures, uint256 maxAge) view returns (bool)",
  "function checkAttestation(BalanceAttestation attestation, NodeSignature[] signatures, uint256 maxAge) view",
  "function hashConditionAttestation(ConditionAttestation attestation, uint256[] licenseIds) view returns (bytes32)",
  "function isConditionAttestationValid(ConditionAttestation attestation, NodeSignature[] signatures, uint256 maxAge) view returns (bool)",
  "function checkConditionAttestation(ConditionAttestation attestation, NodeSignature[] signatures, uint256 maxAge) view",
  "function recordAttestation(BalanceAttestation attestation, NodeSignature[] signatures)",
  "function MAX_CLOCK_SKEW() view returns (uint256)",
  "function MAX_RECORD_AGE() view returns (uint256)",
  "function MAX_LICENSES() view returns (uint256)",

  // The verifier's own errors (IAttestationVerifier).
  "error AttestationVerifier_UnknownChain(uint8 chain)",
  "error AttestationVerifier_StaleAttestation(uint64 issuedAt, uint256 maxAge)",
  "error AttestationVerifier_IssuedInFuture(uint64 issuedAt)",
  "error AttestationVerifier_MalformedSignature(uint256 index)",
  "error AttestationVerifier_MalleableSignature(uint256 index)",
  "error AttestationVerifier_WrongSigner(uint256 index, address recovered)",
  "error AttestationVerifier_NoLicenses(uint256 index)",
  "error AttestationVerifier_TooManyLicenses(uint256 count)",
  "error AttestationVerifier_DuplicateLicense(uint256 licenseId)",
  "error AttestationVerifier_LicenseNotDelegated(uint256 licenseId, address signer)",
  "error AttestationVerifier_LicenseNotLive(uint256 licenseId)",
  "error AttestationVerifier_QuorumNotReached(uint256 licenses, uint256 quorum)",
  // What `recordAttestation` adds through the verification registry (IVerificationRegistry, OpenZeppelin):
  // the caller's collateral short of the fee, a result as new or newer stored, a verifier without the role.
  "error VerificationRegistry_InsufficientCollateral(address consumer, uint256 available, uint256 needed)",
  "error VerificationRegistry_AttestationNotNewer(uint64 issuedAt, uint64 storedIssuedAt)",
  "error AccessControlUnauthorizedAccount(address account, bytes32 neededRole)",
  "error ReentrancyGuardReentrantCall()",
]);

/** `AttestationExporter`'s ABI (`@avn/contracts/interfaces/IAttestationExporter.sol`), with the EAS errors an export can revert with. */
export const attestationExporterAbi = ATTESTATION_EXPORTER_ABI;
