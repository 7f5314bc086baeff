// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { INodeRegistry } from "./INodeRegistry.sol";
import { IVerificationRegistry } from "./IVerificationRegistry.sol";

/// @title IAttestationVerifier
/// @notice Verifies the two EIP-712 structs circuit nodes sign, the burner wallets of live node licenses: balance
/// attestations (`BalanceAttestation`: what one owner holds of one asset on one chain) and condition
/// attestations (`ConditionAttestation`: a yes/no verdict on whether an Ethereum owner and its linked Solana
/// owner together meet a holding condition over both chains). Each node signs the struct with the ids of the
/// licenses it signs for (`LicensedBalanceAttestation`, `LicensedConditionAttestation`), so the licenses a
/// signature counts for are the signer's own word. Both are valid under the same rules: signatures from
/// distinct licenses, each live and delegated to its signer on the node registry, as many as the
/// verification registry's current quorum, and no older than the caller's maximum age. Any contract checks
/// one in a single view call (`isAttestationValid`, `isConditionAttestationValid`); `recordAttestation` also
/// stores a balance where `IVerificationRegistry.latestBalance` reads it, paying the request fee from the
/// caller's collateral to the signing licenses as a finalized job pays its voters (verdicts are not recorded).
/// @dev EIP-712 domain, for both structs: name "Asset Verification Network", version "1", the chain id, this
/// contract. Chains: 0 = Ethereum, 1 = Solana; owner and asset are encoded as the verification registry
/// encodes them (EVM addresses left-padded into bytes32).
interface IAttestationVerifier {
    /*//////////////////////////////////////////////////////////////
                                 TYPES
    //////////////////////////////////////////////////////////////*/

    /// @notice What a quorum of nodes signs (pinned: integrations and outside tools rely on these names).
    /// @param queryResultHash keccak-256 of the API's QueryResult bytes.
    /// @param sourceBlock The Ethereum block, or the minimum Solana slot, the answer holds at.
    /// @param issuedAt The issue time, in seconds.
    // The field order is the pinned EIP-712 type's; the struct lives in calldata, never in storage.
    // solhint-disable-next-line gas-struct-packing
    struct BalanceAttestation {
        uint8 chain;
        bytes32 owner;
        bytes32 asset;
        uint256 balance;
        bytes32 queryResultHash;
        uint64 sourceBlock;
        uint64 issuedAt;
    }

    /// @notice What a quorum of nodes signs about a holding condition (pinned, as `BalanceAttestation` is).
    /// @param conditionHash The hash of the condition the verdict is about, as the protocol package computes it.
    /// @param ownersHash `keccak256(abi.encode(bytes32 ethereumOwner, bytes32 solanaOwner))`: the Ethereum
    /// address left-padded as `BalanceAttestation.owner`, the Solana public key's 32 bytes; an absent owner is zero.
    /// @param verdict Whether the owners meet the condition. A valid attestation may say no: consumers check it.
    /// @param ethereumBlock The Ethereum block the verdict holds at.
    /// @param solanaSlot The minimum Solana slot the verdict holds at.
    /// @param issuedAt The issue time, in seconds.
    // The field order is the pinned EIP-712 type's; the struct lives in calldata, never in storage.
    // solhint-disable-next-line gas-struct-packing
    struct ConditionAttestation {
        bytes32 conditionHash;
        bytes32 ownersHash;
        bool verdict;
        uint64 ethereumBlock;
        uint64 solanaSlot;
        uint64 issuedAt;
    }

    /// @notice One node's signature over an attestation, for the licenses delegated to it. `signature` is over
    /// `LicensedBalanceAttestation(attestation, licenseIds)` (or `LicensedConditionAttestation` for a condition),
    /// with `licenseIds` exactly as here (same order).
    struct NodeSignature {
        address signer;
        uint256[] licenseIds;
        bytes signature;
    }

    /*//////////////////////////////////////////////////////////////
                                 ERRORS
    //////////////////////////////////////////////////////////////*/

    /// @notice Thrown when a constructor address is zero.
    error AttestationVerifier_ZeroAddress();

    /// @notice Thrown when the attestation names a chain other than 0 (Ethereum) or 1 (Solana).
    error AttestationVerifier_UnknownChain(uint8 chain);

    /// @notice Thrown when the attestation was issued more than `maxAge` seconds ago.
    error AttestationVerifier_StaleAttestation(uint64 issuedAt, uint256 maxAge);

    /// @notice Thrown when the attestation's issue time is ahead of the block time: more than `MAX_CLOCK_SKEW`
    /// ahead in a view, ahead at all when recording.
    error AttestationVerifier_IssuedInFuture(uint64 issuedAt);

    /// @notice Thrown when signature `index` is not 65 bytes or does not recover to any address.
    error AttestationVerifier_MalformedSignature(uint256 index);

    /// @notice Thrown when signature `index` has a high `s` (the malleable twin of a valid signature).
    error AttestationVerifier_MalleableSignature(uint256 index);

    /// @notice Thrown when signature `index` recovers to another address than its `signer`: a wrong
    /// signer, another struct (any field changed, or a condition verdict word other than the 0 or 1 signed),
    /// license ids other than those signed (added, removed or reordered), or a struct signed for another
    /// chain id or verifying contract.
    error AttestationVerifier_WrongSigner(uint256 index, address recovered);

    /// @notice Thrown when signature `index` names no license.
    error AttestationVerifier_NoLicenses(uint256 index);

    /// @notice Thrown when the signatures name more than `MAX_LICENSES` licenses in all.
    error AttestationVerifier_TooManyLicenses(uint256 count);

    /// @notice Thrown when a license appears twice among the signatures.
    error AttestationVerifier_DuplicateLicense(uint256 licenseId);

    /// @notice Thrown when `licenseId` is not delegated to `signer` (never, no longer, or voided by a transfer).
    error AttestationVerifier_LicenseNotDelegated(uint256 licenseId, address signer);

    /// @notice Thrown when `licenseId` is delegated to its signer but the signer's heartbeat has lapsed.
    error AttestationVerifier_LicenseNotLive(uint256 licenseId);

    /// @notice Thrown when the signatures cover fewer distinct live licenses than the current quorum.
    error AttestationVerifier_QuorumNotReached(uint256 licenses, uint256 quorum);

    /*//////////////////////////////////////////////////////////////
                              CONSTANT VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @notice keccak256 of the `BalanceAttestation` type string.
    function BALANCE_ATTESTATION_TYPEHASH() external view returns (bytes32);

    /// @notice keccak256 of the `LicensedBalanceAttestation` type string (what each node signs):
    /// `LicensedBalanceAttestation(BalanceAttestation attestation,uint256[] licenseIds)` followed by the
    /// `BalanceAttestation` type string.
    function LICENSED_BALANCE_ATTESTATION_TYPEHASH() external view returns (bytes32);

    /// @notice keccak256 of the `ConditionAttestation` type string.
    function CONDITION_ATTESTATION_TYPEHASH() external view returns (bytes32);

    /// @notice keccak256 of the `LicensedConditionAttestation` type string (what each node signs about a
    /// condition): `LicensedConditionAttestation(ConditionAttestation attestation,uint256[] licenseIds)` followed
    /// by the `ConditionAttestation` type string.
    function LICENSED_CONDITION_ATTESTATION_TYPEHASH() external view returns (bytes32);

    /// @notice The most licenses one attestation's signatures may name (bounds the duplicate check).
    function MAX_LICENSES() external view returns (uint256);

    /// @notice How far ahead of the block time an issue time may be in a view (the hub stamps the L2 head's
    /// time; a caller's RPC may lag the hub's by a block or two). Recording accepts none.
    function MAX_CLOCK_SKEW() external view returns (uint256);

    /// @notice The maximum age of an attestation `recordAttestation` accepts, in seconds.
    function MAX_RECORD_AGE() external view returns (uint256);

    /// @notice The node registry that says which license is live and delegated to whom.
    function NODE_REGISTRY() external view returns (INodeRegistry);

    /// @notice The verification registry whose quorum counts, and where recorded results live.
    function REGISTRY() external view returns (IVerificationRegistry);

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @notice The EIP-712 digest a node signs for `attestation` and its `licenseIds` (in that order):
    /// the `LicensedBalanceAttestation` under this contract's domain.
    function hashAttestation(
        BalanceAttestation calldata attestation,
        uint256[] calldata licenseIds
    ) external view returns (bytes32);

    /// @notice Whether `signatures` make `attestation` valid now with at most `maxAge` seconds of age:
    /// distinct licenses, each live and delegated to its signer, reaching the current quorum. Never reverts
    /// on a bad attestation (see `checkAttestation` for the reason).
    function isAttestationValid(
        BalanceAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view returns (bool);

    /// @notice Like `isAttestationValid`, but reverts with the reason an attestation is not valid.
    function checkAttestation(
        BalanceAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view;

    /// @notice The EIP-712 digest a node signs for the condition `attestation` and its `licenseIds` (in that
    /// order): the `LicensedConditionAttestation` under this contract's domain.
    function hashConditionAttestation(
        ConditionAttestation calldata attestation,
        uint256[] calldata licenseIds
    ) external view returns (bytes32);

    /// @notice Whether `signatures` make the condition `attestation` valid now with at most `maxAge` seconds
    /// of age, under the rules of `isAttestationValid`. Valid means signed and fresh, not true: a valid
    /// attestation may carry a false verdict, so a consumer checks `verdict` itself. Never reverts on a bad
    /// attestation.
    function isConditionAttestationValid(
        ConditionAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view returns (bool);

    /// @notice Like `isConditionAttestationValid`, but reverts with the reason an attestation is not valid
    /// (the errors of `checkAttestation`; a condition names no chain, so never `UnknownChain`).
    function checkConditionAttestation(
        ConditionAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view;

    /*//////////////////////////////////////////////////////////////
                               FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Verifies `attestation` (at most `MAX_RECORD_AGE` old, not issued after the block time), charges the request fee to the caller's
    /// collateral in the verification registry, credits it to the signing licenses, and stores the
    /// balance where `latestBalance` reads it. Reverts with the verification's reason, or with the
    /// registry's when the caller's collateral is short or a result issued as late or later is stored.
    function recordAttestation(BalanceAttestation calldata attestation, NodeSignature[] calldata signatures) external;
}
