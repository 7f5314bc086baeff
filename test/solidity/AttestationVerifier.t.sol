// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IAttestationVerifier } from "../../contracts/interfaces/IAttestationVerifier.sol";

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
