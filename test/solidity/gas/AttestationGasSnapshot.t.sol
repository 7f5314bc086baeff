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
        _giveCollateral(consumer, 1_000e18);
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

/// @dev A fresh deployment (quorum 2 of 3, nothing recorded yet) whose consumer has collateral, and the
/// network's first recording, of a new subject, with its execution gas snapshotted under `name`.
abstract contract FirstRecordingFixture is AttestationFixture {
    address internal consumer = address(0xC0);

    function setUp() public virtual {
        _deployWithNodes();
        _giveCollateral(consumer, 1_000e18);
    }

    function _recordFirst(string memory name) internal {
        IAttestationVerifier.BalanceAttestation memory attestation = IAttestationVerifier.BalanceAttestation({
            chain: 0,
            owner: bytes32(uint256(uint160(address(0x1234)))),
            asset: bytes32(uint256(uint160(address(primary)))),
            balance: 183,
            queryResultHash: keccak256(abi.encode(uint256(183))),
            sourceBlock: 1000,
            issuedAt: uint64(block.timestamp)
        });
        IAttestationVerifier.NodeSignature[] memory signatures = _quorumSignatures(attestation);
        vm.prank(consumer);
        verifier.recordAttestation(attestation, signatures);
        vm.snapshotGasLastCall("AttestationVerifier", name);
        assertEq(registry.claimableFees(1), 0.5e18, "not paid");
    }
}

/// @notice The network's first recording when the signing licenses' fee accounts are not open: each signing
/// license adds its account's first write (~17k gas), which the next contract's opened accounts spare; and the
/// opening itself.
contract AttestationFirstRecordingGasSnapshotTest is FirstRecordingFixture {
    function test_Gas_OpenLicenseAccounts() public {
        vm.prank(nodeOwner);
        registry.openLicenseAccounts(_ids(1));
        vm.snapshotGasLastCall("VerificationRegistry", "openLicenseAccounts(1 license)");
        assertTrue(registry.isLicenseAccountOpen(1), "not open");
    }

    function test_Gas_RecordAttestation_NetworksFirstAccountsNotOpened() public {
        _recordFirst("recordAttestation(quorum 2 of 3, network's first, accounts not opened)");
        // The first fee opened the accounts it credited: their owners' claims will leave them non-zero.
        assertTrue(registry.isLicenseAccountOpen(1) && registry.isLicenseAccountOpen(2), "not opened by the fee");
        assertTrue(!registry.isLicenseAccountOpen(3), "a license that did not sign was opened");
    }
}

/// @notice The same first recording with the licenses' fee accounts opened beforehand, in another transaction
/// (`setUp`), as their owners' set-up or their nodes' start opens them: the subject's slot is the recording's
/// one first write, and each signing license's account a rewrite. Opening an open account again writes
/// nothing.
contract AttestationFirstRecordingOpenedGasSnapshotTest is FirstRecordingFixture {
    function setUp() public override {
        super.setUp();
        uint256[] memory ids = new uint256[](3);
        (ids[0], ids[1], ids[2]) = (1, 2, 3);
        vm.prank(nodeOwner);
        registry.openLicenseAccounts(ids);
    }

    function test_Gas_OpenLicenseAccountsAgain() public {
        vm.prank(nodeOwner);
        registry.openLicenseAccounts(_ids(1));
        vm.snapshotGasLastCall("VerificationRegistry", "openLicenseAccounts(1 license, already open)");
        assertTrue(registry.isLicenseAccountOpen(1), "not open");
    }

    function test_Gas_RecordAttestation_NetworksFirst() public {
        _recordFirst("recordAttestation(quorum 2 of 3, network's first, accounts opened)");
    }
}
