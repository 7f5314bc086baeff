// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";

import { AttestationFixture } from "../utils/Fixtures.sol";

/// @notice Gas of the attested path at quorum 2 of 3, recorded into `snapshots/AttestationVerifier.json`
/// like VerificationGasSnapshot.t.sol: the view checks of a balance and of a condition verdict, and a recording
/// in the warm case (the subject and the signing licenses' epoch have a result and credit already).
contract AttestationGasSnapshotTest is AttestationFixture {
    address internal consumer = address(0xC0);

    function setUp() public {
        _deployWithNodes();
        primary.transfer(consumer, 1_000e18);
        vm.startPrank(consumer);
        primary.approve(address(registry), type(uint256).max);
        registry.stakeCollateral(consumer, 1_000e18);
        vm.stopPrank();
        // A first recording, so the measured one is the warm case.
        IAttestationVerifier.BalanceAttestation memory first = _attestation(100);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumSignatures(first);
        vm.prank(consumer);
        verifier.recordAttestation(first, signatures);
        vm.warp(block.timestamp + 10);
        _beatAll();
    }

    function _attestation(uint256 balance) internal view returns (IAttestationVerifier.BalanceAttestation memory) {
        return IAttestationVerifier.BalanceAttestation({
            chain: 0,
            owner: bytes32(uint256(uint160(address(0x1234)))),
            asset: bytes32(uint256(uint160(address(primary)))),
            balance: balance,
            queryResultHash: keccak256(abi.encode(balance)),
            sourceBlock: 1000,
            issuedAt: uint64(block.timestamp)
        });
    }

    function test_Gas_IsAttestationValid() public {
        IAttestationVerifier.BalanceAttestation memory attestation = _attestation(183);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumSignatures(attestation);
        bool valid = verifier.isAttestationValid(attestation, signatures, 1 hours);
        vm.snapshotGasLastCall("AttestationVerifier", "isAttestationValid(quorum 2 of 3)");
        assertTrue(valid, "not valid");
    }

    function test_Gas_IsConditionAttestationValid() public {
        IAttestationVerifier.ConditionAttestation memory attestation = IAttestationVerifier.ConditionAttestation({
            conditionHash: keccak256("condition"),
            ownersHash: keccak256(abi.encode(bytes32(uint256(uint160(address(0x1234)))), keccak256("solana owner"))),
            verdict: true,
            ethereumBlock: 1000,
            solanaSlot: 2000,
            issuedAt: uint64(block.timestamp)
        });
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumConditionSignatures(attestation);
        bool valid = verifier.isConditionAttestationValid(attestation, signatures, 1 hours);
        vm.snapshotGasLastCall("AttestationVerifier", "isConditionAttestationValid(quorum 2 of 3)");
        assertTrue(valid, "not valid");
    }

    function test_Gas_RecordAttestation() public {
        IAttestationVerifier.BalanceAttestation memory attestation = _attestation(183);
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumSignatures(attestation);
        vm.prank(consumer);
        verifier.recordAttestation(attestation, signatures);
        vm.snapshotGasLastCall("AttestationVerifier", "recordAttestation(quorum 2 of 3, warm)");
        (uint256 balance,,,) = registry.latestBalance(0, attestation.owner, attestation.asset);
        assertEq(balance, 183, "not recorded");
    }
}
