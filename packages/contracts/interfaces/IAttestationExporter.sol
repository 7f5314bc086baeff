// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import { IAttestationVerifier } from "./IAttestationVerifier.sol";

/// @title IAttestationExporter
/// @notice Exports the network's quorum-signed answers to the Ethereum Attestation Service (EAS): a balance
/// attestation or a signed verdict, checked exactly as `IAttestationVerifier.checkAttestation` and
/// `checkConditionAttestation` check them, becomes an EAS attestation whose attester is this contract. It is
/// also the resolver of its two schemas, and refuses any attestation of them made by another attester.
/// @dev Each signed answer is exported once: a second export of the same struct (whatever its signatures)
/// returns the first UID and writes nothing. The answer's key is its EIP-712 struct hash.
interface IAttestationExporter {
    /// @notice Emitted when an answer is exported for the first time.
    /// @param answerHash The EIP-712 struct hash of the `BalanceAttestation` or `ConditionAttestation`.
    /// @param uid The EAS attestation's UID.
    event AttestationExported(bytes32 indexed answerHash, bytes32 indexed uid);

    /// @notice Thrown when a constructor address is zero.
    error AttestationExporter_ZeroAddress();

    /// @notice The EAS schema of balance answers: the fields of `BalanceAttestation`, in its order.
    function BALANCE_SCHEMA() external view returns (string memory);

    /// @notice The EAS schema of verdicts: the fields of `ConditionAttestation`, in its order.
    function CONDITION_SCHEMA() external view returns (string memory);

    /// @notice The UID of `BALANCE_SCHEMA`, registered by the constructor with this contract as resolver,
    /// not revocable: `keccak256(abi.encodePacked(BALANCE_SCHEMA, address(this), false))`.
    function BALANCE_SCHEMA_UID() external view returns (bytes32);

    /// @notice The UID of `CONDITION_SCHEMA`, registered as `BALANCE_SCHEMA_UID` is.
    function CONDITION_SCHEMA_UID() external view returns (bytes32);

    /// @notice The EAS contract the answers are exported to (on an OP-stack chain, its predeploy). An address, not
    /// EAS's interface type: this package does not depend on EAS's.
    function EAS() external view returns (address);

    /// @notice The verifier whose checks an export passes.
    function VERIFIER() external view returns (IAttestationVerifier);

    /// @notice How old an answer may be at its first export, in seconds (the verifier's `MAX_RECORD_AGE`).
    function MAX_EXPORT_AGE() external view returns (uint256);

    /// @notice The UID an answer was exported under, or zero before its first export.
    /// @param answerHash The answer's EIP-712 struct hash.
    function uidOf(bytes32 answerHash) external view returns (bytes32);

    /// @notice Exports a balance attestation to EAS under `BALANCE_SCHEMA_UID`, after checking it as
    /// `checkAttestation(attestation, signatures, MAX_EXPORT_AGE)` does (reverting with its errors). The EAS
    /// data is `abi.encode(attestation)`; the recipient is the owner's address for an Ethereum answer and zero
    /// for a Solana one. It does not expire and cannot be revoked: it states a balance at one block.
    /// @return uid The EAS UID: a new one, or the first one when this answer was exported before.
    function exportAttestation(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external returns (bytes32 uid);

    /// @notice Exports a signed verdict to EAS under `CONDITION_SCHEMA_UID`, after checking it as
    /// `checkConditionAttestation(attestation, signatures, MAX_EXPORT_AGE)` does. The EAS data is
    /// `abi.encode(attestation)` and the recipient zero (the owners are bound by `ownersHash`).
    /// @return uid The EAS UID: a new one, or the first one when this verdict was exported before.
    function exportConditionAttestation(
        IAttestationVerifier.ConditionAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external returns (bytes32 uid);
}
