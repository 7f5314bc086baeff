// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { IAttestationVerifier } from "./interfaces/IAttestationVerifier.sol";

/// @title AttestationConsumer
/// @notice A base for contracts that act on what a quorum of the Asset Verification Network's licensed nodes
/// signed: a balance (`BalanceAttestation`) or a yes/no verdict over a holding condition (`ConditionAttestation`).
/// It checks them against the network's `AttestationVerifier` in one view call, at most `MAX_ATTESTATION_AGE`
/// seconds old, and holds the checks integrations tend to get wrong: an attestation proves only what it is
/// about, so it must name this caller, this asset, this chain and this condition (anyone can present a valid
/// attestation about someone else), and a valid verdict may say no.
/// @dev Inherit it, pass the verifier and the maximum age to the constructor, and call `_requireEvmHolding` or
/// `_requireVerdict` (or the lower-level `_require…`/`_is…Valid` views) before granting anything. Each refusal
/// reverts with a named error: this contract's for a wrong subject, the verifier's own
/// (`AttestationVerifier_StaleAttestation`, `AttestationVerifier_QuorumNotReached`, …) for signatures, quorum and
/// age. An attestation is a statement about a block, not an authorization: presenting it twice proves the same
/// thing twice, so a contract that grants something once keeps its own record of who claimed.
abstract contract AttestationConsumer {
    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @dev `BalanceAttestation.chain` of an Ethereum holding (1 is Solana).
    uint8 internal constant _ETHEREUM_CHAIN = 0;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @notice The network's attestation verifier, which checks signatures, licenses, quorum and age.
    IAttestationVerifier public immutable ATTESTATION_VERIFIER;

    /// @notice The oldest attestation this contract accepts, in seconds since its `issuedAt`.
    uint256 public immutable MAX_ATTESTATION_AGE;

    /*//////////////////////////////////////////////////////////////
                                 ERRORS
    //////////////////////////////////////////////////////////////*/

    /// @notice Thrown when the constructor is given the zero address as the verifier.
    error AttestationConsumer_ZeroVerifier();

    /// @notice Thrown when the constructor is given a maximum attestation age of zero.
    error AttestationConsumer_ZeroMaxAge();

    /// @notice Thrown when a balance attestation is about another chain than Ethereum (0).
    error AttestationConsumer_WrongChain(uint8 chain);

    /// @notice Thrown when a balance attestation is about another owner than `expected` (the address left-padded).
    error AttestationConsumer_WrongOwner(bytes32 owner, bytes32 expected);

    /// @notice Thrown when a balance attestation is about another asset than `expected` (the address left-padded).
    error AttestationConsumer_WrongAsset(bytes32 asset, bytes32 expected);

    /// @notice Thrown when the attested balance is below `minBalance`.
    error AttestationConsumer_BalanceTooLow(uint256 balance, uint256 minBalance);

    /// @notice Thrown when a verdict is about another condition than `expected`.
    error AttestationConsumer_WrongCondition(bytes32 conditionHash, bytes32 expected);

    /// @notice Thrown when a verdict is about other owners than `expected`.
    error AttestationConsumer_WrongOwners(bytes32 ownersHash, bytes32 expected);

    /// @notice Thrown when a verdict says the owners do not meet the condition.
    error AttestationConsumer_ConditionNotMet();

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param verifier The network's `AttestationVerifier` on this chain.
    /// @param maxAttestationAge The oldest attestation accepted, in seconds (the verifier also accepts an issue
    /// time up to its `MAX_CLOCK_SKEW` ahead of the block's, for callers whose RPC lags the network's).
    constructor(IAttestationVerifier verifier, uint256 maxAttestationAge) {
        if (address(verifier) == address(0)) revert AttestationConsumer_ZeroVerifier();
        if (maxAttestationAge == 0) revert AttestationConsumer_ZeroMaxAge();
        ATTESTATION_VERIFIER = verifier;
        MAX_ATTESTATION_AGE = maxAttestationAge;
    }

    /*//////////////////////////////////////////////////////////////
                            INTERNAL VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @notice Whether a quorum of live licenses signed `attestation`, at most `MAX_ATTESTATION_AGE` old. Says
    /// nothing of whom or what it is about: check its fields too, or use `_requireEvmHolding`.
    function _isBalanceAttestationValid(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) internal view returns (bool) {
        return ATTESTATION_VERIFIER.isAttestationValid(attestation, signatures, MAX_ATTESTATION_AGE);
    }

    /// @notice Like `_isBalanceAttestationValid`, but reverts with the verifier's error naming the reason.
    function _requireValidBalanceAttestation(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) internal view {
        ATTESTATION_VERIFIER.checkAttestation(attestation, signatures, MAX_ATTESTATION_AGE);
    }

    /// @notice Whether a quorum of live licenses signed the verdict `attestation`, at most `MAX_ATTESTATION_AGE`
    /// old. Valid is not true: a valid verdict may say no. Check its fields too, or use `_requireVerdict`.
    function _isConditionAttestationValid(
        IAttestationVerifier.ConditionAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) internal view returns (bool) {
        return ATTESTATION_VERIFIER.isConditionAttestationValid(attestation, signatures, MAX_ATTESTATION_AGE);
    }

    /// @notice Like `_isConditionAttestationValid`, but reverts with the verifier's error naming the reason.
    function _requireValidConditionAttestation(
        IAttestationVerifier.ConditionAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) internal view {
        ATTESTATION_VERIFIER.checkConditionAttestation(attestation, signatures, MAX_ATTESTATION_AGE);
    }

    /// @notice Requires `attestation` to say that `owner` holds at least `minBalance` of `asset` on Ethereum
    /// (an ERC-20's base units, an ERC-721's count), signed by a quorum of live licenses and at most
    /// `MAX_ATTESTATION_AGE` old. Pass `msg.sender` as `owner` unless the contract acts for someone else:
    /// anyone may present an attestation about any holder.
    function _requireEvmHolding(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures,
        address owner,
        address asset,
        uint256 minBalance
    ) internal view {
        if (attestation.chain != _ETHEREUM_CHAIN) revert AttestationConsumer_WrongChain(attestation.chain);
        bytes32 expectedOwner = _evmAddressToBytes32(owner);
        if (attestation.owner != expectedOwner) revert AttestationConsumer_WrongOwner(attestation.owner, expectedOwner);
        bytes32 expectedAsset = _evmAddressToBytes32(asset);
        if (attestation.asset != expectedAsset) revert AttestationConsumer_WrongAsset(attestation.asset, expectedAsset);
        if (attestation.balance < minBalance) revert AttestationConsumer_BalanceTooLow(attestation.balance, minBalance);
        _requireValidBalanceAttestation(attestation, signatures);
    }

    /// @notice Requires `attestation` to be a "yes" verdict on `conditionHash` for the owners `ownersHash`,
    /// signed by a quorum of live licenses and at most `MAX_ATTESTATION_AGE` old.
    /// @param conditionHash The condition's hash, as the protocol package computes it (`conditionHash`).
    /// @param ownersHash The owners the verdict must be about: `_ownersHash(ethereumOwner, solanaOwner)`.
    function _requireVerdict(
        IAttestationVerifier.ConditionAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures,
        bytes32 conditionHash,
        bytes32 ownersHash
    ) internal view {
        if (attestation.conditionHash != conditionHash) {
            revert AttestationConsumer_WrongCondition(attestation.conditionHash, conditionHash);
        }
        if (attestation.ownersHash != ownersHash) revert AttestationConsumer_WrongOwners(attestation.ownersHash, ownersHash);
        // Reading the calldata bool reverts on a word above 1 (which no quorum signs anyway).
        if (!attestation.verdict) revert AttestationConsumer_ConditionNotMet();
        _requireValidConditionAttestation(attestation, signatures);
    }

    /*//////////////////////////////////////////////////////////////
                           INTERNAL HELPERS
    //////////////////////////////////////////////////////////////*/

    /// @notice The owners hash a verdict about `ethereumOwner` and its linked `solanaOwner` names:
    /// `keccak256(abi.encode(bytes32 ethereumOwner, bytes32 solanaOwner))`, the address left-padded, the Solana
    /// public key's 32 bytes (zero: no Solana owner).
    function _ownersHash(address ethereumOwner, bytes32 solanaOwner) internal pure returns (bytes32) {
        return keccak256(abi.encode(_evmAddressToBytes32(ethereumOwner), solanaOwner));
    }

    /// @notice An EVM address as attestations name owners and assets: left-padded into 32 bytes.
    function _evmAddressToBytes32(address account) internal pure returns (bytes32) {
        return bytes32(uint256(uint160(account)));
    }
}
