// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";

import { ProtocolFixture } from "../utils/Fixtures.sol";

/// @notice Gas of the node and verification operations, recorded into `snapshots/*.json` like
/// GasSnapshot.t.sol: state prepared in `setUp`, one measured call per test.
contract VerificationGasSnapshotTest is ProtocolFixture {
    address internal owner = address(0x0A11);
    address internal consumer = address(0xC0);
    address[3] internal operators = [address(0x0B1), address(0x0B2), address(0x0B3)];
    address internal newOperator = address(0x0B9);

    function setUp() public {
        _deployProtocol(600, 1e18, 3);

        // Licenses 1-3 run the three operators; license 4 is free to delegate.
        license.airdrop(owner, 4);
        for (uint256 i = 0; i < 3; ++i) {
            uint256[] memory ids = new uint256[](1);
            ids[0] = i + 1;
            vm.prank(owner);
            nodeRegistry.delegate(ids, operators[i]);
            vm.prank(operators[i]);
            nodeRegistry.heartbeat(100);
        }

        // The consumer has collateral; job 1 is finalized (so the licenses and the epoch have earned
        // before: the warm case), job 2 has two votes, job 3 none.
        primary.transfer(consumer, 1_000e18);
        vm.startPrank(consumer);
        primary.approve(address(registry), type(uint256).max);
        registry.stakeCollateral(consumer, 1_000e18);
        for (uint256 i = 0; i < 3; ++i) registry.requestEvmBalance(HOLDER, address(primary));
        vm.stopPrank();
        for (uint256 i = 0; i < 3; ++i) _vote(i, 1);
        _vote(0, 2);
        _vote(1, 2);
    }

    address internal constant HOLDER = address(0x1234);

    function _submission(uint256 jobId, uint256 licenseId) internal view returns (IVerificationRegistry.Submission[] memory batch) {
        uint256[] memory ids = new uint256[](1);
        ids[0] = licenseId;
        batch = new IVerificationRegistry.Submission[](1);
        batch[0] = IVerificationRegistry.Submission({
            jobId: jobId,
            licenseIds: ids,
            owner: bytes32(uint256(uint160(HOLDER))),
            asset: bytes32(uint256(uint160(address(primary)))),
            balance: 183,
            queryResultHash: keccak256(abi.encode(uint256(183))),
            sourceBlock: 1000
        });
    }

    function _vote(uint256 operatorIndex, uint256 jobId) internal {
        IVerificationRegistry.Submission[] memory batch = _submission(jobId, operatorIndex + 1);
        vm.prank(operators[operatorIndex]);
        registry.submitResults(batch);
    }

    function test_Gas_Delegate() public {
        uint256[] memory ids = new uint256[](1);
        ids[0] = 4;
        vm.prank(owner);
        nodeRegistry.delegate(ids, newOperator);
        vm.snapshotGasLastCall("NodeRegistry", "delegate(1 license)");
    }

    function test_Gas_Heartbeat() public {
        vm.prank(operators[0]);
        nodeRegistry.heartbeat(120);
        vm.snapshotGasLastCall("NodeRegistry", "heartbeat");
    }

    function test_Gas_RequestEvmBalance() public {
        vm.prank(consumer);
        registry.requestEvmBalance(address(0x5678), address(primary));
        vm.snapshotGasLastCall("VerificationRegistry", "requestEvmBalance");
    }

    function test_Gas_SubmitFirstVote() public {
        IVerificationRegistry.Submission[] memory batch = _submission(3, 1);
        vm.prank(operators[0]);
        registry.submitResults(batch);
        vm.snapshotGasLastCall("VerificationRegistry", "submitResults(first vote)");
    }

    function test_Gas_SubmitFinalizingVote() public {
        IVerificationRegistry.Submission[] memory batch = _submission(2, 3);
        vm.prank(operators[2]);
        registry.submitResults(batch);
        vm.snapshotGasLastCall("VerificationRegistry", "submitResults(finalizing vote, quorum 3)");
        assertTrue(registry.getResult(2).status == IVerificationRegistry.JobStatus.Finalized, "job 2 finalized");
    }

    /// @dev The first finalization of an epoch also moves each agreeing license's earlier epoch votes out
    /// of its account and opens the epoch's vote total.
    function test_Gas_SubmitFinalizingVoteFirstOfEpoch() public {
        vm.warp(block.timestamp + 7 days);
        for (uint256 i = 0; i < 3; ++i) {
            vm.prank(operators[i]);
            nodeRegistry.heartbeat(100);
        }
        vm.prank(consumer);
        uint256 jobId = registry.requestEvmBalance(HOLDER, address(primary));
        _vote(0, jobId);
        _vote(1, jobId);
        IVerificationRegistry.Submission[] memory batch = _submission(jobId, 3);
        vm.prank(operators[2]);
        registry.submitResults(batch);
        vm.snapshotGasLastCall("VerificationRegistry", "submitResults(finalizing vote, quorum 3, first of an epoch)");
        assertTrue(registry.getResult(jobId).status == IVerificationRegistry.JobStatus.Finalized, "job finalized");
    }
}
