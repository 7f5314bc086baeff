// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AttestationConsumer } from "@avn/contracts/AttestationConsumer.sol";
import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";

/// @notice `AttestationConsumer` for tests: each internal check of the base, exposed as it is.
contract MockAttestationConsumer is AttestationConsumer {
    constructor(IAttestationVerifier verifier, uint256 maxAttestationAge) AttestationConsumer(verifier, maxAttestationAge) { }

    function isBalanceAttestationValid(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external view returns (bool) {
        return _isBalanceAttestationValid(attestation, signatures);
    }

    function requireValidBalanceAttestation(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external view {
        _requireValidBalanceAttestation(attestation, signatures);
    }

    function isConditionAttestationValid(
        IAttestationVerifier.ConditionAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external view returns (bool) {
        return _isConditionAttestationValid(attestation, signatures);
    }

    function requireValidConditionAttestation(
        IAttestationVerifier.ConditionAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external view {
        _requireValidConditionAttestation(attestation, signatures);
    }

    function requireEvmHolding(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures,
        address owner,
        address asset,
        uint256 minBalance
    ) external view {
        _requireEvmHolding(attestation, signatures, owner, asset, minBalance);
    }

    function requireVerdict(
        IAttestationVerifier.ConditionAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures,
        bytes32 conditionHash,
        bytes32 ownersHash
    ) external view {
        _requireVerdict(attestation, signatures, conditionHash, ownersHash);
    }

    function ownersHashOf(address ethereumOwner, bytes32 solanaOwner) external pure returns (bytes32) {
        return _ownersHash(ethereumOwner, solanaOwner);
    }

    function evmAddressToBytes32(address account) external pure returns (bytes32) {
        return _evmAddressToBytes32(account);
    }
}
