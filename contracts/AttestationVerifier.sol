// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { ECDSA } from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import { EIP712 } from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";

import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";
import { INodeRegistry } from "@avn/contracts/interfaces/INodeRegistry.sol";
import { IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";

/// @title AttestationVerifier
/// @notice See {IAttestationVerifier}.
/// @dev Holds no state and no privilege of its own beyond the verification registry's ATTESTATION_ROLE,
/// which lets it record a verified attestation there. Each node signs the attestation together with its own
/// license ids (`LicensedBalanceAttestation`, `LicensedConditionAttestation`), so whoever carries the
/// signatures cannot add, move or reorder a license. Balance and condition attestations differ only in their
/// struct hash and in the licensed type hash each signature's digest is built with: one signature pass
/// serves both. For a valid attestation the gas of every entry point is the same at any block time within
/// the validity window: the time checks are computed without branching (a client that sends exactly its gas
/// estimate must not run out because its transaction is mined a second later). One pass over the
/// signatures recovers each signer and compares each license with those before it (at most `MAX_LICENSES`,
/// so the quadratic duplicate check stays small); then one call to the node registry checks every
/// delegation and heartbeat and returns the quorum, which the registry keeps in the slot it reads the
/// liveness window from. That is the whole cost of a check beyond the two signature recoveries: one
/// contract, one parameter slot, and one slot per signer and per license.
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
    // solhint-disable-next-line gas-small-strings
    bytes32 public constant LICENSED_BALANCE_ATTESTATION_TYPEHASH = keccak256(
        "LicensedBalanceAttestation(BalanceAttestation attestation,uint256[] licenseIds)BalanceAttestation(uint8 chain,bytes32 owner,bytes32 asset,uint256 balance,bytes32 queryResultHash,uint64 sourceBlock,uint64 issuedAt)"
    );

    /// @inheritdoc IAttestationVerifier
    // solhint-disable-next-line gas-small-strings
    bytes32 public constant CONDITION_ATTESTATION_TYPEHASH = keccak256(
        "ConditionAttestation(bytes32 conditionHash,bytes32 ownersHash,bool verdict,uint64 ethereumBlock,uint64 solanaSlot,uint64 issuedAt)"
    );

    /// @inheritdoc IAttestationVerifier
    // solhint-disable-next-line gas-small-strings
    bytes32 public constant LICENSED_CONDITION_ATTESTATION_TYPEHASH = keccak256(
        "LicensedConditionAttestation(ConditionAttestation attestation,uint256[] licenseIds)ConditionAttestation(bytes32 conditionHash,bytes32 ownersHash,bool verdict,uint64 ethereumBlock,uint64 solanaSlot,uint64 issuedAt)"
    );

    /// @inheritdoc IAttestationVerifier
    uint256 public constant MAX_LICENSES = 16;

    /// @inheritdoc IAttestationVerifier
    // The hub stamps `issuedAt` with the L2 head's own timestamp, so a view at that head or later sees no skew
    // at all; this allows a caller's RPC to be up to two 2-second L2 blocks behind the hub's.
    uint256 public constant MAX_CLOCK_SKEW = 4 seconds;

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
        // Nothing issued after this block's time is recorded: it would outrank results that come after it.
        Outcome memory outcome = _verify(attestation, signatures, MAX_RECORD_AGE, 0);
        if (outcome.failure != Failure.None) _revertWith(outcome);
        _recordAttestedResult(attestation, _licenseIdsOf(outcome.delegations));
    }

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IAttestationVerifier
    function hashAttestation(
        BalanceAttestation calldata attestation,
        uint256[] calldata licenseIds
    ) external view returns (bytes32) {
        return _licensedDigest(
            _domainSeparatorV4(), _attestationStructHash(attestation), LICENSED_BALANCE_ATTESTATION_TYPEHASH, licenseIds
        );
    }

    /// @inheritdoc IAttestationVerifier
    function hashConditionAttestation(
        ConditionAttestation calldata attestation,
        uint256[] calldata licenseIds
    ) external view returns (bytes32) {
        return _licensedDigest(
            _domainSeparatorV4(), _conditionStructHash(attestation), LICENSED_CONDITION_ATTESTATION_TYPEHASH, licenseIds
        );
    }

    /// @inheritdoc IAttestationVerifier
    function isAttestationValid(
        BalanceAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view returns (bool) {
        return _verify(attestation, signatures, maxAge, MAX_CLOCK_SKEW).failure == Failure.None;
    }

    /// @inheritdoc IAttestationVerifier
    function checkAttestation(
        BalanceAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view {
        Outcome memory outcome = _verify(attestation, signatures, maxAge, MAX_CLOCK_SKEW);
        if (outcome.failure != Failure.None) _revertWith(outcome);
    }

    /// @inheritdoc IAttestationVerifier
    function isConditionAttestationValid(
        ConditionAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view returns (bool) {
        return _verifyCondition(attestation, signatures, maxAge).failure == Failure.None;
    }

    /// @inheritdoc IAttestationVerifier
    function checkConditionAttestation(
        ConditionAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) external view {
        Outcome memory outcome = _verifyCondition(attestation, signatures, maxAge);
        if (outcome.failure != Failure.None) _revertWith(outcome);
    }

    /*//////////////////////////////////////////////////////////////
                           PRIVATE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @dev Verifies a balance attestation. `maxAhead`: how far past the block time `issuedAt` may be (0 to
    /// record, `MAX_CLOCK_SKEW` in views).
    function _verify(
        BalanceAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge,
        uint256 maxAhead
    ) private view returns (Outcome memory outcome) {
        if (attestation.chain > _LAST_CHAIN) return _fail(Failure.UnknownChain, attestation.chain, 0);
        (bool stale, bool future) = _timeChecks(attestation.issuedAt, maxAge, maxAhead);
        if (stale) return _fail(Failure.Stale, attestation.issuedAt, maxAge);
        if (future) return _fail(Failure.IssuedInFuture, attestation.issuedAt, 0);
        return _verifySignatures(_attestationStructHash(attestation), LICENSED_BALANCE_ATTESTATION_TYPEHASH, signatures);
    }

    /// @dev `_verify` for a condition: no chain to check, and only views verify one (verdicts are not recorded),
    /// so the views' clock skew always applies. The age checks are repeated here rather than shared through a
    /// helper taking the struct hash: that extra frame cost every check about 140 gas.
    function _verifyCondition(
        ConditionAttestation calldata attestation,
        NodeSignature[] calldata signatures,
        uint256 maxAge
    ) private view returns (Outcome memory) {
        (bool stale, bool future) = _timeChecks(attestation.issuedAt, maxAge, MAX_CLOCK_SKEW);
        if (stale) return _fail(Failure.Stale, attestation.issuedAt, maxAge);
        if (future) return _fail(Failure.IssuedInFuture, attestation.issuedAt, 0);
        return _verifySignatures(_conditionStructHash(attestation), LICENSED_CONDITION_ATTESTATION_TYPEHASH, signatures);
    }

    /// @dev The signatures' part of a verification: each recovers to its signer over the struct (`structHash`,
    /// hashed once by the caller) with its own license list under `licensedTypeHash`, no license is named
    /// twice, and the node registry finds all delegated and live.
    function _verifySignatures(
        bytes32 structHash,
        bytes32 licensedTypeHash,
        NodeSignature[] calldata signatures
    ) private view returns (Outcome memory outcome) {
        // Each license named, packed with its signer as `licenseId << 160 | signer`: room for the most an
        // attestation may name, shrunk to those named, and checked by the node registry in one call.
        uint256[] memory delegations = new uint256[](MAX_LICENSES);

        // Each signature's digest adds only its own license list to the struct and domain, each hashed once.
        bytes32 domainSeparator = _domainSeparatorV4();
        uint256 count;
        for (uint256 i = 0; i < signatures.length; ++i) {
            NodeSignature calldata signature = signatures[i];
            address signer = signature.signer;
            uint256[] calldata signed = signature.licenseIds;
            bytes32 digest = _licensedDigest(domainSeparator, structHash, licensedTypeHash, signed);
            (Failure failure, uint256 arg) = _checkSigner(digest, signer, signature.signature);
            if (failure != Failure.None) return _fail(failure, i, arg);
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

    /// @dev Whether `issuedAt` is more than `maxAge` before the block time, and whether it is more than
    /// `maxAhead` after it. Computed without a branch, so the gas is the same whichever side of the block
    /// time `issuedAt` falls on; no sum can overflow, whatever the caller passes as `maxAge` (`issuedAt` is a
    /// uint64, `maxAhead` a small constant).
    function _timeChecks(
        uint256 issuedAt,
        uint256 maxAge,
        uint256 maxAhead
    ) private view returns (bool stale, bool future) {
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let time := timestamp()
            // The age is zero for a time ahead of the block's (multiplied by the comparison, not branched on).
            let age := mul(gt(time, issuedAt), sub(time, issuedAt))
            stale := gt(age, maxAge)
            future := gt(issuedAt, add(time, maxAhead))
        }
    }

    /// @dev hashStruct of a `BalanceAttestation`: every field is a static type, so the struct's seven calldata
    /// words are its EIP-712 encoding, hashed as they are after the type hash. A field with bits above its type
    /// hashes to a struct no node signed (typed-data signers refuse such values), and reading it elsewhere
    /// reverts, so copying without the decoder's checks lets nothing through.
    function _attestationStructHash(BalanceAttestation calldata attestation) private pure returns (bytes32 structHash) {
        bytes32 typeHash = BALANCE_ATTESTATION_TYPEHASH;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let scratch := mload(0x40)
            mstore(scratch, typeHash)
            calldatacopy(add(scratch, 0x20), attestation, 0xe0)
            structHash := keccak256(scratch, 0x100)
        }
    }

    /// @dev hashStruct of a `ConditionAttestation`: as `_attestationStructHash`, its six calldata words after
    /// the type hash. The verdict word is hashed as it comes, not read as a bool (reading a calldata bool
    /// above 1 reverts) nor cleaned to one: nodes sign 0 or 1 (EIP-712 encodes a bool as that word, and
    /// typed-data signers encode nothing else), so a word of 2 hashes to a struct no one signed and fails as
    /// `WrongSigner`, where cleaning it would let true's signatures vouch for calldata that assembly or another
    /// decoder could read as neither true nor false.
    function _conditionStructHash(ConditionAttestation calldata attestation) private pure returns (bytes32 structHash) {
        bytes32 typeHash = CONDITION_ATTESTATION_TYPEHASH;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let scratch := mload(0x40)
            mstore(scratch, typeHash)
            calldatacopy(add(scratch, 0x20), attestation, 0xc0)
            structHash := keccak256(scratch, 0xe0)
        }
    }

    /// @dev The digest one node signs: the licensed struct (`licensedTypeHash`: `LicensedBalanceAttestation` or
    /// `LicensedConditionAttestation`) of the struct and its license ids, in the order given (an EIP-712 array
    /// is the hash of its packed elements), under `domainSeparator`. Hashed in the memory past the free
    /// pointer, which it leaves where it was: a check runs this once per signature.
    function _licensedDigest(
        bytes32 domainSeparator,
        bytes32 structHash,
        bytes32 licensedTypeHash,
        uint256[] calldata licenseIds
    ) private pure returns (bytes32 digest) {
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let scratch := mload(0x40)
            let size := shl(5, licenseIds.length)
            calldatacopy(scratch, licenseIds.offset, size)
            let licenseIdsHash := keccak256(scratch, size)
            mstore(scratch, licensedTypeHash)
            mstore(add(scratch, 0x20), structHash)
            mstore(add(scratch, 0x40), licenseIdsHash)
            let licensedHash := keccak256(scratch, 0x60)
            // MessageHashUtils.toTypedDataHash: keccak256("\x19\x01" ‖ domainSeparator ‖ licensedHash).
            mstore(scratch, hex"1901")
            mstore(add(scratch, 0x02), domainSeparator)
            mstore(add(scratch, 0x22), licensedHash)
            digest := keccak256(scratch, 0x42)
        }
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

    /// @dev `REGISTRY.recordAttestedResult(msg.sender, attestation, licenseIds)`, encoded by hand: the registry
    /// takes the same struct (`IAttestationVerifier.BalanceAttestation`), seven static fields, so its ABI encoding
    /// is the attestation's calldata words as they are (the registry's decoder checks each field's range when
    /// it reads it). Building the struct field by field and encoding it again cost more than a third of the
    /// gas the signed license lists added. A revert is passed on as it came.
    function _recordAttestedResult(BalanceAttestation calldata attestation, uint256[] memory licenseIds) private {
        bytes4 selector = IVerificationRegistry.recordAttestedResult.selector;
        address registry = address(REGISTRY);
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let count := mload(licenseIds)
            let data := mload(0x40)
            mstore(data, selector)
            mstore(add(data, 0x04), caller())
            calldatacopy(add(data, 0x24), attestation, 0xe0)
            // The head: payer, the struct's seven words, then the array's offset from the head's start.
            mstore(add(data, 0x104), 0x120)
            mstore(add(data, 0x124), count)
            for { let i := 0 } lt(i, count) { i := add(i, 1) } {
                mstore(add(add(data, 0x144), shl(5, i)), mload(add(add(licenseIds, 0x20), shl(5, i))))
            }
            if iszero(call(gas(), registry, 0, data, add(0x144, shl(5, count)), 0, 0)) {
                returndatacopy(data, 0, returndatasize())
                revert(data, returndatasize())
            }
        }
    }

    /// @dev The license ids of `licenseId << 160 | signer` entries, unpacked in place (the entries are not
    /// needed after the check).
    function _licenseIdsOf(uint256[] memory delegations) private pure returns (uint256[] memory licenseIds) {
        for (uint256 i = 0; i < delegations.length; ++i) {
            delegations[i] >>= 160;
        }
        return delegations;
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
