// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ECDSA } from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import { EIP712 } from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";

import { IAttestationVerifier } from "./interfaces/IAttestationVerifier.sol";
import { INodeRegistry } from "./interfaces/INodeRegistry.sol";
import { IVerificationRegistry } from "./interfaces/IVerificationRegistry.sol";

/// @title AttestationVerifier
/// @notice See {IAttestationVerifier}.
/// @dev Holds no state and no privilege of its own beyond the verification registry's ATTESTATION_ROLE,
/// which lets it record a verified attestation there. One pass over the signatures recovers each signer and
/// compares each license with those before it (at most `MAX_LICENSES`, so the quadratic duplicate check
/// stays small); then one call to the node registry checks every delegation and heartbeat and returns the
/// quorum, which the registry keeps in the slot it reads the liveness window from. That is the whole
/// cost of a check beyond the two signature recoveries: one contract, one parameter slot, and one slot
/// per signer and per license.
contract AttestationVerifier is EIP712, IAttestationVerifier {
    /*//////////////////////////////////////////////////////////////
                                 TYPES
    //////////////////////////////////////////////////////////////*/

    /// @dev Why an attestation is not valid; `_revertWith` maps each to its custom error.
    enum Failure {
        None,
        UnknownChain,
        Stale,
        IssuedInFuture,
        MalformedSignature,
        MalleableSignature,
        WrongSigner,
        NoLicenses,
        TooManyLicenses,
        DuplicateLicense,
        LicenseNotDelegated,
        LicenseNotLive,
        QuorumNotReached
    }

    /// @dev A verification's outcome: the failure with its error arguments, or the licenses that signed.
    struct Outcome {
        Failure failure;
        uint256 arg0;
        uint256 arg1;
        uint256[] delegations;
    }

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IAttestationVerifier
    // The pinned EIP-712 type string, hashed at compile time (its length costs nothing at run time).
    // solhint-disable-next-line gas-small-strings
    bytes32 public constant BALANCE_ATTESTATION_TYPEHASH = keccak256(
        "BalanceAttestation(uint8 chain,bytes32 owner,bytes32 asset,uint256 balance,bytes32 queryResultHash,uint64 sourceBlock,uint64 issuedAt)"
    );

    /// @inheritdoc IAttestationVerifier
    uint256 public constant MAX_LICENSES = 16;

    /// @inheritdoc IAttestationVerifier
    uint256 public constant MAX_CLOCK_SKEW = 60 seconds;

    /// @inheritdoc IAttestationVerifier
    uint256 public constant MAX_RECORD_AGE = 1 hours;

    uint8 internal constant _LAST_CHAIN = 1;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IAttestationVerifier
    INodeRegistry public immutable NODE_REGISTRY;

    /// @inheritdoc IAttestationVerifier
    IVerificationRegistry public immutable REGISTRY;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param registry The verification registry (this contract needs its ATTESTATION_ROLE to record).
    constructor(IVerificationRegistry registry) EIP712("Asset Verification Network", "1") {
        if (address(registry) == address(0)) revert AttestationVerifier_ZeroAddress();
        REGISTRY = registry;
        NODE_REGISTRY = registry.NODE_REGISTRY();
    }

    /*//////////////////////////////////////////////////////////////
                           EXTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IAttestationVerifier
    function recordAttestation(BalanceAttestation calldata attestation, NodeSignature[] calldata signatures) external {
        Outcome memory outcome = _verify(attestation, signatures, MAX_RECORD_AGE);
        if (outcome.failure != Failure.None) _revertWith(outcome);
        REGISTRY.recordAttestedResult(
            msg.sender,
            IVerificationRegistry.AttestedResult({
                chain: attestation.chain,
                owner: attestation.owner,
                asset: attestation.asset,
                balance: attestation.balance,
                queryResultHash: attestation.queryResultHash,
                sourceBlock: attestation.sourceBlock,
                issuedAt: attestation.issuedAt
            }),
            _licenseIdsOf(outcome.delegations)
        );
    }

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IAttestationVerifier
    function hashAttestation(BalanceAttestation calldata attestation) public view returns (bytes32) {
        // Every field is a static type, so the struct's ABI encoding is its EIP-712 encoding.
        return _hashTypedDataV4(keccak256(abi.encode(BALANCE_ATTESTATION_TYPEHASH, attestation)));
    }

    /// @inheritdoc IAttestationVerifier
    function isAttestationValid(
        BalanceAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view returns (bool) {
        return _verify(attestation, signatures, maxAge).failure == Failure.None;
    }

    /// @inheritdoc IAttestationVerifier
    function checkAttestation(
        BalanceAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view {
        Outcome memory outcome = _verify(attestation, signatures, maxAge);
        if (outcome.failure != Failure.None) _revertWith(outcome);
    }

    /*//////////////////////////////////////////////////////////////
                           PRIVATE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    function _verify(
        BalanceAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) private view returns (Outcome memory outcome) {
        if (attestation.chain > _LAST_CHAIN) return _fail(Failure.UnknownChain, attestation.chain, 0);
        uint256 issuedAt = attestation.issuedAt;
        // Written so that no sum can overflow, whatever the caller passes as `maxAge`.
        if (issuedAt < block.timestamp && block.timestamp - issuedAt > maxAge) {
            return _fail(Failure.Stale, issuedAt, maxAge);
        }
        if (issuedAt > block.timestamp + MAX_CLOCK_SKEW) return _fail(Failure.IssuedInFuture, issuedAt, 0);

        // Each license named, packed with its signer as `licenseId << 160 | signer`: room for the most an
        // attestation may name, shrunk to those named, and checked by the node registry in one call.
        uint256[] memory delegations = new uint256[](MAX_LICENSES);

        bytes32 digest = hashAttestation(attestation);
        uint256 count;
        for (uint256 i = 0; i < signatures.length; ++i) {
            NodeSignature calldata signature = signatures[i];
            address signer = signature.signer;
            (Failure failure, uint256 arg) = _checkSigner(digest, signer, signature.signature);
            if (failure != Failure.None) return _fail(failure, i, arg);
            uint256[] calldata signed = signature.licenseIds;
            if (signed.length == 0) return _fail(Failure.NoLicenses, i, 0);
            if (count + signed.length > MAX_LICENSES) return _fail(Failure.TooManyLicenses, count + signed.length, 0);
            for (uint256 j = 0; j < signed.length; ++j) {
                uint256 licenseId = signed[j];
                // No license id reaches 2^96 (the supply is far smaller); refusing one keeps the packing exact.
                if (licenseId > type(uint96).max) {
                    return _fail(Failure.LicenseNotDelegated, licenseId, uint256(uint160(signer)));
                }
                for (uint256 k = 0; k < count; ++k) {
                    if (delegations[k] >> 160 == licenseId) return _fail(Failure.DuplicateLicense, licenseId, 0);
                }
                delegations[count] = (licenseId << 160) | uint160(signer);
                ++count;
            }
        }
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            mstore(delegations, count)
        }
        (bool allLive, uint256 quorum) = NODE_REGISTRY.checkDelegations(delegations);
        if (!allLive) return _notLive(signatures);
        if (count < quorum) return _fail(Failure.QuorumNotReached, count, quorum);
        outcome.delegations = delegations;
    }

    /// @dev Recovers the signature's address and compares it with its signer (a malleable high-s twin or a
    /// malformed signature fails before any comparison).
    function _checkSigner(
        bytes32 digest,
        address signer,
        bytes calldata signature
    ) private pure returns (Failure, uint256) {
        (address recovered, ECDSA.RecoverError error,) = ECDSA.tryRecoverCalldata(digest, signature);
        if (error == ECDSA.RecoverError.InvalidSignatureS) return (Failure.MalleableSignature, 0);
        if (error != ECDSA.RecoverError.NoError) return (Failure.MalformedSignature, 0);
        if (recovered != signer) return (Failure.WrongSigner, uint256(uint160(recovered)));
        return (Failure.None, 0);
    }

    /// @dev Says which license is not live for its signer: one delegated elsewhere (or to no one), or else the
    /// first license of a signer whose heartbeat lapsed. Only on this failure path, so the valid path asks
    /// the node registry once.
    function _notLive(NodeSignature[] calldata signatures) private view returns (Outcome memory) {
        for (uint256 i = 0; i < signatures.length; ++i) {
            uint256[] calldata licenseIds = signatures[i].licenseIds;
            for (uint256 j = 0; j < licenseIds.length; ++j) {
                if (NODE_REGISTRY.operatorOf(licenseIds[j]) != signatures[i].signer) {
                    return _fail(Failure.LicenseNotDelegated, licenseIds[j], uint256(uint160(signatures[i].signer)));
                }
            }
        }
        for (uint256 i = 0; i < signatures.length; ++i) {
            uint256 licenseId = signatures[i].licenseIds[0];
            if (!NODE_REGISTRY.isLive(licenseId)) return _fail(Failure.LicenseNotLive, licenseId, 0);
        }
        // Unreachable while the registry answers consistently; a failure is still reported as one.
        return _fail(Failure.LicenseNotLive, signatures[0].licenseIds[0], 0);
    }

    /// @dev The license ids of `licenseId << 160 | signer` entries.
    function _licenseIdsOf(uint256[] memory delegations) private pure returns (uint256[] memory licenseIds) {
        licenseIds = new uint256[](delegations.length);
        for (uint256 i = 0; i < delegations.length; ++i) {
            licenseIds[i] = delegations[i] >> 160;
        }
    }

    function _fail(Failure failure, uint256 arg0, uint256 arg1) private pure returns (Outcome memory outcome) {
        outcome.failure = failure;
        outcome.arg0 = arg0;
        outcome.arg1 = arg1;
    }

    function _revertWith(Outcome memory outcome) private pure {
        Failure failure = outcome.failure;
        uint256 arg0 = outcome.arg0;
        uint256 arg1 = outcome.arg1;
        if (failure == Failure.UnknownChain) revert AttestationVerifier_UnknownChain(uint8(arg0));
        if (failure == Failure.Stale) revert AttestationVerifier_StaleAttestation(uint64(arg0), arg1);
        if (failure == Failure.IssuedInFuture) revert AttestationVerifier_IssuedInFuture(uint64(arg0));
        if (failure == Failure.MalformedSignature) revert AttestationVerifier_MalformedSignature(arg0);
        if (failure == Failure.MalleableSignature) revert AttestationVerifier_MalleableSignature(arg0);
        if (failure == Failure.WrongSigner) revert AttestationVerifier_WrongSigner(arg0, address(uint160(arg1)));
        if (failure == Failure.NoLicenses) revert AttestationVerifier_NoLicenses(arg0);
        if (failure == Failure.TooManyLicenses) revert AttestationVerifier_TooManyLicenses(arg0);
        if (failure == Failure.DuplicateLicense) revert AttestationVerifier_DuplicateLicense(arg0);
        if (failure == Failure.LicenseNotDelegated) {
            revert AttestationVerifier_LicenseNotDelegated(arg0, address(uint160(arg1)));
        }
        if (failure == Failure.LicenseNotLive) revert AttestationVerifier_LicenseNotLive(arg0);
        revert AttestationVerifier_QuorumNotReached(arg0, arg1);
    }
}
