// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";

import { ProtocolFixture } from "../utils/Fixtures.sol";
import { VerificationHandler } from "./VerificationHandler.sol";

/// @notice Invariants of the verification network under random requests, votes, license transfers,
/// re-delegations, expiries, fee claims and time warps (see VerificationHandler).
contract VerificationInvariantTest is ProtocolFixture {
    VerificationHandler internal handler;
    address internal consumer = address(0xC0);

    function setUp() public {
        // A fee that 2, 3, 4 and 5 agreeing licenses do not divide: the remainder path always runs.
        _deployProtocol(7 days, 3e18 + 1, 2);

        handler = new VerificationHandler(license, nodeRegistry, registry, consumer);
        license.airdrop(handler.owners(0), 5);
        handler.delegateAll();

        // The consumer has collateral for many jobs.
        _giveCollateral(consumer, 1_000_000e18);

        bytes4[] memory selectors = new bytes4[](11);
        selectors[0] = VerificationHandler.warp.selector;
        selectors[1] = VerificationHandler.request.selector;
        selectors[2] = VerificationHandler.submit.selector;
        selectors[3] = VerificationHandler.transferLicense.selector;
        selectors[4] = VerificationHandler.redelegate.selector;
        selectors[5] = VerificationHandler.expire.selector;
        selectors[6] = VerificationHandler.claimFees.selector;
        selectors[7] = VerificationHandler.submitWithTransferredLicense.selector;
        selectors[8] = VerificationHandler.cycleCollateral.selector;
        selectors[9] = VerificationHandler.submitWrongSubject.selector;
        selectors[10] = VerificationHandler.warpToNextEpoch.selector;
        targetContract(address(handler));
        targetSelector(FuzzSelector({ addr: address(handler), selectors: selectors }));
    }

    /// @custom:invariant No job finalizes below quorum, none stays open at quorum, and the stored balance
    /// is the answer that reached quorum.
    function invariant_NoFinalizationBelowQuorum() public view {
        assertTrue(!handler.finalizedBelowQuorum(), "a job finalized below quorum or with another answer");
        assertTrue(!handler.quorumWithoutFinalization(), "a job reached quorum without finalizing");
        assertTrue(!handler.unexpectedOutcome(), "a submission or expiry outcome differs from the model");
        assertTrue(!handler.wrongSubjectAccepted(), "a vote about another owner or asset was accepted");
    }

    /// @custom:invariant A license never counts twice in one job.
    function invariant_LicenseCountsOncePerJob() public view {
        assertTrue(!handler.doubleVoteAccepted(), "a license voted twice on a job");
        for (uint256 i = 0; i < handler.jobCount(); ++i) {
            uint256 jobId = handler.jobIds(i);
            IVerificationRegistry.JobView memory job = registry.getJob(jobId);
            // A finalized job's record holds its result, not its votes (counted below).
            if (job.status == IVerificationRegistry.JobStatus.Finalized) continue;
            assertEq(job.voteCount, handler.votesInModel(jobId), "vote count differs from the model");
        }
        // Every accepted vote counts once as a submission, and once as agreed or disagreed when its job
        // finalizes.
        uint256 submissions;
        uint256 outcomes;
        for (uint256 licenseId = 1; licenseId <= 5; ++licenseId) {
            submissions += nodeRegistry.submissionsOf(licenseId);
            IVerificationRegistry.VoteStats memory stats = registry.voteStatsOf(licenseId);
            outcomes += stats.agreed + stats.disagreed;
        }
        assertEq(submissions, handler.acceptedVotes(), "recorded submissions differ from accepted votes");
        assertEq(outcomes, handler.votesOnFinalizedJobs(), "vote outcomes differ from the votes of finalized jobs");
    }

    /// @custom:invariant latestBalance points at the highest finalized job id of each subject, whatever
    /// source blocks the nodes reported.
    function invariant_LatestBalanceFollowsJobOrder() public view {
        for (uint8 chain = 0; chain < 2; ++chain) {
            for (uint256 seed = 1; seed <= 2; ++seed) {
                bytes32 owner = chain == 1 ? bytes32(seed) : bytes32(uint256(uint160(seed)));
                bytes32 asset = chain == 1 ? bytes32(uint256(0x5000)) : bytes32(uint256(uint160(0x5000)));
                uint256 expected = handler.latestJob(chain, owner);
                if (expected == 0) continue;
                (,,, uint256 jobId) = registry.latestBalance(chain, owner, asset);
                assertEq(jobId, expected, "latest job differs from the highest finalized job id");
            }
        }
    }

    /// @custom:invariant Every finalized job's fee is credited to licenses, once: credited fees are
    /// either unclaimed or claimed; claims burn the fees' staked tokens and pay the owners the same amount
    /// in staked tokens, never in primary ones.
    function invariant_FeesCreditedOnceAndPaidStaked() public view {
        uint256 unclaimed;
        for (uint256 licenseId = 1; licenseId <= 5; ++licenseId) {
            unclaimed += registry.claimableFees(licenseId);
        }
        assertEq(unclaimed + handler.feesClaimed(), handler.feesOfFinalizedJobs(), "credited fees differ from the fees of finalized jobs");
        assertEq(registry.totalFeesBurned(), handler.feesClaimed(), "burned fees differ from claimed fees");
        assertEq(primary.balanceOf(address(registry)), 0, "the registry keeps primary tokens");
        uint256 ownersStaked = staked.balanceOf(handler.owners(0)) + staked.balanceOf(handler.owners(1));
        assertEq(ownersStaked, handler.feesClaimed(), "fees were not paid in staked tokens");
        assertEq(primary.balanceOf(handler.owners(0)) + primary.balanceOf(handler.owners(1)), 0, "fees paid in primary tokens");
    }

    /// @custom:invariant A delegation of a transferred license is void until its new owner delegates again.
    function invariant_TransferredLicenseDelegationVoid() public view {
        for (uint256 licenseId = 1; licenseId <= 5; ++licenseId) {
            if (handler.voidedByTransfer(licenseId)) {
                assertEq(nodeRegistry.operatorOf(licenseId), address(0), "delegation survived a transfer");
                assertTrue(!nodeRegistry.isLive(licenseId), "transferred license still live");
            } else {
                assertEq(nodeRegistry.operatorOf(licenseId), handler.operators(handler.delegatedTo(licenseId)), "operator differs");
            }
        }
    }

    /// @custom:invariant The staked token stays exactly backed, and the registry holds exactly the
    /// consumer's collateral and the unclaimed fees in staked tokens.
    function invariant_StakedBackingHolds() public view {
        assertEq(
            primary.balanceOf(address(staked)),
            staked.totalSupply() + staked.totalPendingRedemptions(),
            "staked token backing differs"
        );
        IVerificationRegistry.Collateral memory collateral = registry.collateralOf(consumer);
        uint256 unclaimedFees;
        for (uint256 licenseId = 1; licenseId <= 5; ++licenseId) {
            unclaimedFees += registry.claimableFees(licenseId);
        }
        assertEq(
            staked.balanceOf(address(registry)),
            uint256(collateral.available) + collateral.reserved + unclaimedFees,
            "registry staked balance differs from collateral and unclaimed fees"
        );
        assertEq(staked.balanceOf(consumer), handler.consumerStakedBalance(), "consumer staked balance drifted");
    }
}
