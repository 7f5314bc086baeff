// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";

import { bound } from "./utils/Bound.sol";
import { AttestationFixture } from "./utils/Fixtures.sol";

/// @notice Fuzz tests of the attestation verifier: a quorum's signatures verify the struct they signed and
/// nothing else, whichever field changes and to whatever value.
contract AttestationVerifierFuzzTest is AttestationFixture {
    function setUp() public {
        _deployWithNodes();
    }

    function _attestation(uint256 balance, bytes32 queryResultHash, uint64 sourceBlock)
        internal
        view
        returns (IAttestationVerifier.BalanceAttestation memory)
    {
        return IAttestationVerifier.BalanceAttestation({
            chain: 1,
            owner: keccak256("owner"),
            asset: keccak256("mint"),
            balance: balance,
            queryResultHash: queryResultHash,
            sourceBlock: sourceBlock,
            issuedAt: uint64(block.timestamp)
        });
    }

    /// @dev Whatever it says, a struct signed by a quorum verifies.
    function testFuzz_SignedAttestationVerifies(uint256 balance, bytes32 queryResultHash, uint64 sourceBlock) public view {
        IAttestationVerifier.BalanceAttestation memory attestation = _attestation(balance, queryResultHash, sourceBlock);
        assertTrue(verifier.isAttestationValid(attestation, _quorumSignatures(attestation), 0), "a quorum-signed attestation failed");
    }

    /// @dev The signatures of one struct never verify another: any field changed to any other value fails.
    function testFuzz_ChangedFieldFailsVerification(uint256 fieldSeed, uint256 value) public view {
        IAttestationVerifier.BalanceAttestation memory signed = _attestation(183, keccak256("query result"), 1000);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumSignatures(signed);
        IAttestationVerifier.BalanceAttestation memory changed = _attestation(183, keccak256("query result"), 1000);
        uint256 field = fieldSeed % 7;
        if (field == 0) {
            changed.chain = uint8(bound(value, 0, type(uint8).max));
            if (changed.chain == signed.chain) changed.chain = 0;
        } else if (field == 1) {
            changed.owner = bytes32(value) == signed.owner ? bytes32(0) : bytes32(value);
        } else if (field == 2) {
            changed.asset = bytes32(value) == signed.asset ? bytes32(0) : bytes32(value);
        } else if (field == 3) {
            changed.balance = value == signed.balance ? value + 1 : value;
        } else if (field == 4) {
            changed.queryResultHash = bytes32(value) == signed.queryResultHash ? bytes32(0) : bytes32(value);
        } else if (field == 5) {
            changed.sourceBlock = uint64(value) == signed.sourceBlock ? 0 : uint64(value);
        } else {
            // Any other issue time, also one within the age limit and the clock skew.
            changed.issuedAt = uint64(bound(value, block.timestamp - 1 hours, block.timestamp + verifier.MAX_CLOCK_SKEW()));
            if (changed.issuedAt == signed.issuedAt) changed.issuedAt -= 1;
        }
        assertTrue(!verifier.isAttestationValid(changed, signatures, 1 hours), "a changed attestation verified");
        assertTrue(verifier.isAttestationValid(signed, signatures, 1 hours), "the signed attestation failed");
    }

    /// @dev A signature counts only for the license list its signer signed: any other list (another id, one
    /// more, one fewer) recovers to someone else.
    function testFuzz_ChangedLicenseListFailsVerification(uint256 licenseId, uint256 position) public view {
        IAttestationVerifier.BalanceAttestation memory attestation = _attestation(183, keccak256("query result"), 1000);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumSignatures(attestation);
        uint256[] memory signed = signatures[0].licenseIds;
        uint256[] memory changed;
        if (position % 3 == 0) {
            // Another id in place of the signed one.
            changed = new uint256[](1);
            changed[0] = licenseId == signed[0] ? licenseId + 1 : licenseId;
        } else if (position % 3 == 1) {
            // One more id, at the end.
            changed = new uint256[](2);
            changed[0] = signed[0];
            changed[1] = licenseId;
        } else {
            // One more id, in front.
            changed = new uint256[](2);
            changed[0] = licenseId;
            changed[1] = signed[0];
        }
        signatures[0].licenseIds = changed;
        assertTrue(!verifier.isAttestationValid(attestation, signatures, 1 hours), "a changed license list verified");
    }
}

/// @notice Condition verdicts (`ConditionAttestation`): signed, checked and refused under the balance
/// attestation's rules, with the same errors; a verdict word other than the 0 or 1 signed never verifies.
contract ConditionAttestationTest is AttestationFixture {
    /// @dev secp256k1's group order: `N - s` is the high-s twin of a signature's `s`.
    uint256 internal constant SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141;
    uint256 internal constant MAX_AGE = 1 hours;
    /// @dev Where the verdict word sits in a call's data: after the selector, the struct's first two words.
    uint256 internal constant VERDICT_OFFSET = 4 + 2 * 32;

    function setUp() public {
        _deployWithNodes();
    }

    function _condition(bool verdict) internal view returns (IAttestationVerifier.ConditionAttestation memory) {
        return IAttestationVerifier.ConditionAttestation({
            conditionHash: keccak256("condition"),
            ownersHash: keccak256(abi.encode(bytes32(uint256(uint160(address(0x1234)))), keccak256("solana owner"))),
            verdict: verdict,
            ethereumBlock: 1000,
            solanaSlot: 2000,
            issuedAt: uint64(block.timestamp)
        });
    }

    /// @dev Expects the condition to be invalid in both views: `false`, and a revert with `error`.
    function _expectInvalid(
        IAttestationVerifier.ConditionAttestation memory attestation,
        IAttestationVerifier.NodeSignature[] memory signatures,
        bytes memory error
    ) internal {
        assertTrue(!verifier.isConditionAttestationValid(attestation, signatures, MAX_AGE), "an invalid condition verified");
        vm.expectRevert(error);
        verifier.checkConditionAttestation(attestation, signatures, MAX_AGE);
    }

    /// @dev The address `signature` recovers to over `digest` (what `WrongSigner` names).
    function _recover(bytes32 digest, bytes memory signature) internal pure returns (address) {
        (bytes32 r, bytes32 s, uint8 v) = _split(signature);
        return ecrecover(digest, v, r, s);
    }

    /// @dev A 65-byte signature's `r`, `s` and `v`.
    function _split(bytes memory signature) internal pure returns (bytes32 r, bytes32 s, uint8 v) {
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
    }

    function _wrongSigner(uint256 index, address recovered) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(IAttestationVerifier.AttestationVerifier_WrongSigner.selector, index, recovered);
    }

    function test_TypeHashesArePinnedStrings() public view {
        assertEq(
            uint256(verifier.CONDITION_ATTESTATION_TYPEHASH()),
            uint256(
                keccak256(
                    "ConditionAttestation(bytes32 conditionHash,bytes32 ownersHash,bool verdict,uint64 ethereumBlock,uint64 solanaSlot,uint64 issuedAt)"
                )
            ),
            "condition type hash"
        );
        assertEq(
            uint256(verifier.LICENSED_CONDITION_ATTESTATION_TYPEHASH()),
            uint256(
                keccak256(
                    "LicensedConditionAttestation(ConditionAttestation attestation,uint256[] licenseIds)ConditionAttestation(bytes32 conditionHash,bytes32 ownersHash,bool verdict,uint64 ethereumBlock,uint64 solanaSlot,uint64 issuedAt)"
                )
            ),
            "licensed condition type hash"
        );
    }

    /// @dev The digest is the EIP-712 one built field by field with `abi.encode` (no calldata shortcut).
    function test_HashIsTheEip712Digest() public view {
        IAttestationVerifier.ConditionAttestation memory a = _condition(true);
        uint256[] memory licenseIds = new uint256[](2);
        licenseIds[0] = 3;
        licenseIds[1] = 1;
        bytes32 structHash = keccak256(
            abi.encode(
                verifier.CONDITION_ATTESTATION_TYPEHASH(),
                a.conditionHash,
                a.ownersHash,
                a.verdict,
                a.ethereumBlock,
                a.solanaSlot,
                a.issuedAt
            )
        );
        bytes32 licensed = keccak256(
            abi.encode(verifier.LICENSED_CONDITION_ATTESTATION_TYPEHASH(), structHash, keccak256(abi.encodePacked(licenseIds)))
        );
        bytes32 domainSeparator = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256("Asset Verification Network"),
                keccak256("1"),
                block.chainid,
                address(verifier)
            )
        );
        bytes32 expected = keccak256(abi.encodePacked(hex"1901", domainSeparator, licensed));
        assertEq(uint256(verifier.hashConditionAttestation(a, licenseIds)), uint256(expected), "digest");
    }

    /// @dev Valid is about signatures and age, not the verdict: a quorum-signed "no" is valid too.
    function test_ValidAtQuorum_WhateverTheVerdict() public view {
        for (uint256 verdict = 0; verdict < 2; ++verdict) {
            IAttestationVerifier.ConditionAttestation memory attestation = _condition(verdict == 1);
            IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(attestation);
            assertTrue(verifier.isConditionAttestationValid(attestation, signatures, MAX_AGE), "a quorum-signed verdict failed");
            verifier.checkConditionAttestation(attestation, signatures, MAX_AGE);
        }
    }

    function test_RevertWhen_VerdictFlipped() public {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(attestation);
        attestation.verdict = false;
        bytes32 digest = verifier.hashConditionAttestation(attestation, signatures[0].licenseIds);
        _expectInvalid(attestation, signatures, _wrongSigner(0, _recover(digest, signatures[0].signature)));
    }

    function test_RevertWhen_OtherConditionHash() public {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(attestation);
        attestation.conditionHash = keccak256("another condition");
        bytes32 digest = verifier.hashConditionAttestation(attestation, signatures[0].licenseIds);
        _expectInvalid(attestation, signatures, _wrongSigner(0, _recover(digest, signatures[0].signature)));
    }

    function test_RevertWhen_OtherOwnersHash() public {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(attestation);
        // The same Ethereum owner without its Solana owner is another pair of owners.
        attestation.ownersHash = keccak256(abi.encode(bytes32(uint256(uint160(address(0x1234)))), bytes32(0)));
        bytes32 digest = verifier.hashConditionAttestation(attestation, signatures[0].licenseIds);
        _expectInvalid(attestation, signatures, _wrongSigner(0, _recover(digest, signatures[0].signature)));
    }

    /// @dev License 3 is live and delegated to its own node, but appended to node 1's list it is not what
    /// node 1 signed.
    function test_RevertWhen_LicensesPadded() public {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(attestation);
        uint256[] memory padded = new uint256[](2);
        padded[0] = 2;
        padded[1] = 3;
        signatures[1].licenseIds = padded;
        bytes32 digest = verifier.hashConditionAttestation(attestation, padded);
        _expectInvalid(attestation, signatures, _wrongSigner(1, _recover(digest, signatures[1].signature)));
    }

    function test_RevertWhen_DuplicateLicense() public {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        // The same signature twice: its license counted once would be short of the quorum, twice is refused.
        IAttestationVerifier.NodeSignature[] memory twice = new IAttestationVerifier.NodeSignature[](2);
        twice[0] = _signCondition(attestation, operatorKeys[0], _ids(1));
        twice[1] = twice[0];
        bytes memory duplicate = abi.encodeWithSelector(IAttestationVerifier.AttestationVerifier_DuplicateLicense.selector, 1);
        _expectInvalid(attestation, twice, duplicate);
        // One list naming its license twice, signed as such.
        uint256[] memory doubled = new uint256[](2);
        doubled[0] = 1;
        doubled[1] = 1;
        IAttestationVerifier.NodeSignature[] memory one = new IAttestationVerifier.NodeSignature[](1);
        one[0] = _signCondition(attestation, operatorKeys[0], doubled);
        _expectInvalid(attestation, one, duplicate);
    }

    function test_RevertWhen_Stale() public {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        attestation.issuedAt = uint64(block.timestamp - MAX_AGE - 1);
        _expectInvalid(
            attestation,
            _quorumConditionSignatures(attestation),
            abi.encodeWithSelector(
                IAttestationVerifier.AttestationVerifier_StaleAttestation.selector, attestation.issuedAt, MAX_AGE
            )
        );
        // At the limit exactly, it is still fresh.
        attestation.issuedAt = uint64(block.timestamp - MAX_AGE);
        assertTrue(
            verifier.isConditionAttestationValid(attestation, _quorumConditionSignatures(attestation), MAX_AGE),
            "an attestation of the maximum age failed"
        );
    }

    function test_RevertWhen_IssuedInFuture() public {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        attestation.issuedAt = uint64(block.timestamp + verifier.MAX_CLOCK_SKEW() + 1);
        _expectInvalid(
            attestation,
            _quorumConditionSignatures(attestation),
            abi.encodeWithSelector(IAttestationVerifier.AttestationVerifier_IssuedInFuture.selector, attestation.issuedAt)
        );
        // Within the views' clock skew, it is valid.
        attestation.issuedAt = uint64(block.timestamp + verifier.MAX_CLOCK_SKEW());
        assertTrue(
            verifier.isConditionAttestationValid(attestation, _quorumConditionSignatures(attestation), MAX_AGE),
            "an attestation within the clock skew failed"
        );
    }

    function test_RevertWhen_QuorumNotReached() public {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        IAttestationVerifier.NodeSignature[] memory one = new IAttestationVerifier.NodeSignature[](1);
        one[0] = _quorumConditionSignatures(attestation)[0];
        _expectInvalid(
            attestation, one, abi.encodeWithSelector(IAttestationVerifier.AttestationVerifier_QuorumNotReached.selector, 1, 2)
        );
    }

    function test_RevertWhen_MalleableSignature() public {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(attestation);
        (bytes32 r, bytes32 s, uint8 v) = _split(signatures[1].signature);
        // The high-s twin recovers to the same signer with a raw ecrecover: only the verifier's check refuses it.
        signatures[1].signature = abi.encodePacked(r, bytes32(SECP256K1_N - uint256(s)), v == 27 ? uint8(28) : uint8(27));
        bytes32 digest = verifier.hashConditionAttestation(attestation, signatures[1].licenseIds);
        assertEq(_recover(digest, signatures[1].signature), signatures[1].signer, "the twin recovers elsewhere");
        _expectInvalid(
            attestation, signatures, abi.encodeWithSelector(IAttestationVerifier.AttestationVerifier_MalleableSignature.selector, 1)
        );
    }

    /// @dev A verdict word of 2 (or any other than 0 and 1) is hashed as it is: it verifies as neither true nor
    /// false, and the view says so without reverting.
    function test_DirtyVerdictWordNeverVerifies() public view {
        IAttestationVerifier.ConditionAttestation memory attestation = _condition(true);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(attestation);
        uint256[3] memory words = [uint256(1), 2, type(uint256).max];
        for (uint256 i = 0; i < words.length; ++i) {
            bytes memory valid = abi.encodeCall(verifier.isConditionAttestationValid, (attestation, signatures, MAX_AGE));
            _setVerdictWord(valid, words[i]);
            (bool ok, bytes memory answer) = address(verifier).staticcall(valid);
            assertTrue(ok, "the view reverted");
            // Word 1 is the signed struct itself (the control); every other word fails.
            assertTrue(abi.decode(answer, (bool)) == (words[i] == 1), "a verdict word verified as another");
            if (words[i] == 1) continue;
            bytes memory hash = abi.encodeCall(verifier.hashConditionAttestation, (attestation, signatures[0].licenseIds));
            _setVerdictWord(hash, words[i]);
            (, bytes memory digest) = address(verifier).staticcall(hash);
            bytes memory check = abi.encodeCall(verifier.checkConditionAttestation, (attestation, signatures, MAX_AGE));
            _setVerdictWord(check, words[i]);
            (ok, answer) = address(verifier).staticcall(check);
            assertTrue(!ok, "the check passed");
            assertEq(
                uint256(keccak256(answer)),
                uint256(keccak256(_wrongSigner(0, _recover(abi.decode(digest, (bytes32)), signatures[0].signature)))),
                "not WrongSigner"
            );
        }
    }

    function _setVerdictWord(bytes memory data, uint256 word) internal pure {
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            mstore(add(add(data, 0x20), VERDICT_OFFSET), word)
        }
    }

    /// @dev Whatever it says, a verdict signed by a quorum verifies.
    function testFuzz_SignedConditionVerifies(
        bytes32 conditionHash,
        bytes32 ownersHash,
        bool verdict,
        uint64 ethereumBlock,
        uint64 solanaSlot
    ) public view {
        IAttestationVerifier.ConditionAttestation memory attestation = IAttestationVerifier.ConditionAttestation({
            conditionHash: conditionHash,
            ownersHash: ownersHash,
            verdict: verdict,
            ethereumBlock: ethereumBlock,
            solanaSlot: solanaSlot,
            issuedAt: uint64(block.timestamp)
        });
        assertTrue(
            verifier.isConditionAttestationValid(attestation, _quorumConditionSignatures(attestation), 0),
            "a quorum-signed verdict failed"
        );
    }

    /// @dev The signatures of one verdict never verify another: any field changed to any other value fails.
    function testFuzz_ChangedConditionFieldFailsVerification(uint256 fieldSeed, uint256 value) public view {
        IAttestationVerifier.ConditionAttestation memory signed = _condition(true);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(signed);
        IAttestationVerifier.ConditionAttestation memory changed = _condition(true);
        uint256 field = fieldSeed % 6;
        if (field == 0) {
            changed.conditionHash = bytes32(value) == signed.conditionHash ? bytes32(0) : bytes32(value);
        } else if (field == 1) {
            changed.ownersHash = bytes32(value) == signed.ownersHash ? bytes32(0) : bytes32(value);
        } else if (field == 2) {
            changed.verdict = false;
        } else if (field == 3) {
            changed.ethereumBlock = uint64(value) == signed.ethereumBlock ? 0 : uint64(value);
        } else if (field == 4) {
            changed.solanaSlot = uint64(value) == signed.solanaSlot ? 0 : uint64(value);
        } else {
            // Any other issue time, also one within the age limit and the clock skew.
            changed.issuedAt = uint64(bound(value, block.timestamp - MAX_AGE, block.timestamp + verifier.MAX_CLOCK_SKEW()));
            if (changed.issuedAt == signed.issuedAt) changed.issuedAt -= 1;
        }
        assertTrue(!verifier.isConditionAttestationValid(changed, signatures, MAX_AGE), "a changed verdict verified");
        assertTrue(verifier.isConditionAttestationValid(signed, signatures, MAX_AGE), "the signed verdict failed");
    }

    /// @dev A balance attestation's signatures never verify a condition, even over the same leading words:
    /// the licensed type hashes differ.
    function test_BalanceSignaturesDoNotVerifyACondition() public view {
        IAttestationVerifier.ConditionAttestation memory condition = _condition(true);
        IAttestationVerifier.BalanceAttestation memory balance = IAttestationVerifier.BalanceAttestation({
            chain: 0,
            owner: condition.conditionHash,
            asset: condition.ownersHash,
            balance: 1,
            queryResultHash: bytes32(uint256(condition.ethereumBlock)),
            sourceBlock: condition.solanaSlot,
            issuedAt: condition.issuedAt
        });
        assertTrue(verifier.isAttestationValid(balance, _quorumSignatures(balance), MAX_AGE), "the balance failed");
        assertTrue(
            !verifier.isConditionAttestationValid(condition, _quorumSignatures(balance), MAX_AGE),
            "a balance's signatures verified a condition"
        );
    }
}
