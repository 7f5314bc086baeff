// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";
import { IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";
import { NodeLicense } from "../../../contracts/NodeLicense.sol";
import { NodeRegistry } from "../../../contracts/NodeRegistry.sol";
import { VerificationRegistry } from "../../../contracts/VerificationRegistry.sol";

import { bound } from "../utils/Bound.sol";
import { Vm, VM_ADDRESS } from "../utils/Vm.sol";

/// @notice Drives the license, node registry and verification registry through random requests, votes
/// (honest and wrong answers, answers about another owner or asset, single- and multi-license operators),
/// license transfers and re-delegations, heartbeats, expiries, fee claims, and time warps within and across
/// epochs. It keeps its own model of who is
/// delegated, who voted what and which jobs are open, predicts each call's outcome from it, and raises a
/// flag when the contracts disagree.
contract VerificationHandler {
    Vm internal constant vm = Vm(VM_ADDRESS);
    uint256 internal constant LICENSES = 5;
    uint256 internal constant NO_OPERATOR = type(uint256).max;
    bytes32 internal constant ASSET = bytes32(uint256(0x5000));

    NodeLicense public immutable license;
    NodeRegistry public immutable nodeRegistry;
    VerificationRegistry public immutable registry;
    address public immutable consumer;
    uint256 public immutable quorum;
    uint256 public immutable jobTimeout;

    address[4] public operators = [address(0x0B0), address(0x0B1), address(0x0B2), address(0x0B3)];
    address[2] public owners = [address(0x0A0), address(0x0A1)];

    uint256 public currentTime;

    // The model.
    mapping(uint256 licenseId => uint256 operatorIndex) public delegatedTo;
    mapping(uint256 licenseId => bool voided) public voidedByTransfer;
    mapping(uint256 licenseId => uint256 operatorIndex) public operatorBeforeTransfer;
    uint256[] public jobIds;
    mapping(uint256 jobId => uint256 deadline) public deadlineOf;
    mapping(uint256 jobId => uint256 fee) public feeOf;
    mapping(uint256 jobId => bool ended) public endedInModel;
    mapping(uint256 jobId => mapping(uint256 licenseId => bool voted)) public votedInModel;
    mapping(uint256 jobId => mapping(uint256 licenseId => uint256 answer)) public answerInModel;
    mapping(uint256 jobId => uint256 count) public votesInModel;
    mapping(uint256 jobId => mapping(uint256 answer => uint256 count)) public tally;
    mapping(uint256 jobId => uint8 chain) public chainOf;
    mapping(uint256 jobId => bytes32 owner) public ownerOf;
    /// @dev The latest finalized job per (chain, owner) subject: the highest job id.
    mapping(uint8 chain => mapping(bytes32 owner => uint256 jobId)) public latestJob;
    uint256 public feesOfFinalizedJobs;
    uint256 public feesClaimed;
    /// @dev Accepted votes in all, and those on jobs that finalized (each counted agreed or disagreed).
    uint256 public acceptedVotes;
    uint256 public votesOnFinalizedJobs;
    /// @dev Staked tokens the consumer holds outside the registry: withdrawn minus deposited again.
    uint256 public consumerStakedBalance;

    // Disagreements between the model and the contracts.
    bool public finalizedBelowQuorum;
    bool public quorumWithoutFinalization;
    bool public doubleVoteAccepted;
    bool public unexpectedOutcome;
    bool public wrongSubjectAccepted;

    mapping(bytes32 action => uint256 count) public calls;

    modifier useTime() {
        vm.warp(currentTime);
        _;
    }

    constructor(NodeLicense license_, NodeRegistry nodeRegistry_, VerificationRegistry registry_, address consumer_) {
        license = license_;
        nodeRegistry = nodeRegistry_;
        registry = registry_;
        consumer = consumer_;
        quorum = nodeRegistry_.quorum();
        jobTimeout = registry_.jobTimeout();
        currentTime = block.timestamp;
    }

    /// @dev Called once by the test after the licenses were airdropped to `owners[0]`: licenses 1-3 go to
    /// operators 0-2, licenses 4 and 5 to operator 3 (one operator voting with two licenses).
    function delegateAll() external {
        for (uint256 licenseId = 1; licenseId <= LICENSES; ++licenseId) {
            _delegate(licenseId, licenseId <= 3 ? licenseId - 1 : 3);
        }
        for (uint256 i = 0; i < operators.length; ++i) {
            vm.prank(operators[i]);
            nodeRegistry.heartbeat(1);
        }
    }

    function jobCount() external view returns (uint256) {
        return jobIds.length;
    }

    /*//////////////////////////////////////////////////////////////
                                ACTIONS
    //////////////////////////////////////////////////////////////*/

    function warp(uint256 seconds_) external {
        calls["warp"]++;
        _warpTo(currentTime + bound(seconds_, 0, 2 hours));
    }

    /// @dev Moves to the start of the next reward epoch (open jobs time out on the way).
    function warpToNextEpoch() external {
        calls["warpToNextEpoch"]++;
        uint256 duration = registry.EPOCH_DURATION();
        _warpTo(registry.EPOCHS_START() + (registry.currentEpoch() + 1) * duration);
    }

    function request(uint256 ownerSeed, bool solana) external useTime {
        // The consumer may have withdrawn its collateral (cycleCollateral): then there is nothing to pay
        // a job with, and the registry rightly refuses it (unit-tested), so the handler does not ask.
        if (registry.collateralOf(consumer).available < registry.requestFee()) return;
        calls["request"]++;
        bytes32 subject = bytes32(uint256(1 + ownerSeed % 2));
        vm.prank(consumer);
        uint256 jobId = solana
            ? registry.requestSvmBalance(subject, bytes32(uint256(0x5000)))
            : registry.requestEvmBalance(address(uint160(uint256(subject))), address(uint160(uint256(ASSET))));
        jobIds.push(jobId);
        chainOf[jobId] = solana ? 1 : 0;
        ownerOf[jobId] = solana ? subject : bytes32(uint256(uint160(uint256(subject))));
        deadlineOf[jobId] = currentTime + jobTimeout;
        feeOf[jobId] = registry.requestFee();
    }

    /// @dev One operator answers a job for all the licenses the model says it runs, with the honest
    /// answer (183) or one of two wrong ones, read at any source block.
    function submit(uint256 jobSeed, uint256 operatorSeed, uint256 answerSeed, uint64 sourceBlock) external useTime {
        if (jobIds.length == 0) return;
        uint256 jobId = jobIds[jobSeed % jobIds.length];
        uint256 operatorIndex = operatorSeed % operators.length;
        uint256[] memory licenseIds = _licensesOf(operatorIndex);
        if (licenseIds.length == 0) return;
        uint256 answer = [uint256(183), 7, 42][answerSeed % 3];

        bool alreadyVoted;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            if (votedInModel[jobId][licenseIds[i]]) alreadyVoted = true;
        }
        bool open = !endedInModel[jobId] && currentTime <= deadlineOf[jobId];

        vm.prank(operators[operatorIndex]);
        try registry.submitResults(_submission(jobId, licenseIds, answer, sourceBlock)) {
            if (!open) return _checkUnchanged(jobId);
            // A license that voted earlier (through this or another operator) skips the submission.
            if (alreadyVoted) {
                calls["submit.alreadyVoted"]++;
                return _checkUnchanged(jobId);
            }
            calls["submit"]++;
            for (uint256 i = 0; i < licenseIds.length; ++i) {
                votedInModel[jobId][licenseIds[i]] = true;
                answerInModel[jobId][licenseIds[i]] = answer;
            }
            votesInModel[jobId] += licenseIds.length;
            acceptedVotes += licenseIds.length;
            tally[jobId][answer] += licenseIds.length;
            _checkFinalization(jobId, answer);
        } catch {
            // Nothing another party did may revert a well-formed submission.
            unexpectedOutcome = true;
        }
    }

    /// @dev An operator answers an open job about the other owner or another asset: whether its licenses
    /// voted already or not, it is refused (and nothing changes); a closed job skips it as any other.
    function submitWrongSubject(uint256 jobSeed, uint256 operatorSeed, bool otherAsset) external useTime {
        if (jobIds.length == 0) return;
        uint256 jobId = jobIds[jobSeed % jobIds.length];
        uint256 operatorIndex = operatorSeed % operators.length;
        uint256[] memory licenseIds = _licensesOf(operatorIndex);
        if (licenseIds.length == 0) return;
        IVerificationRegistry.Submission[] memory batch = _submission(jobId, licenseIds, 183, 1);
        // Owners are 1 and 2, so this is the other one: a subject other jobs ask about.
        if (otherAsset) batch[0].asset = bytes32(uint256(0x5001));
        else batch[0].owner = bytes32(uint256(batch[0].owner) ^ 3);
        bool open = !endedInModel[jobId] && currentTime <= deadlineOf[jobId];

        vm.prank(operators[operatorIndex]);
        try registry.submitResults(batch) {
            if (open) wrongSubjectAccepted = true;
            _checkUnchanged(jobId);
        } catch (bytes memory reason) {
            if (!open || bytes4(reason) != IVerificationRegistry.VerificationRegistry_WrongSubject.selector) {
                unexpectedOutcome = true;
            }
            calls["submitWrongSubject.refused"]++;
        }
    }

    /// @dev The operator a transferred license was delegated to still tries to vote with it: the
    /// submission must be skipped and change nothing.
    function submitWithTransferredLicense(uint256 licenseSeed, uint256 jobSeed) external useTime {
        uint256 licenseId = 1 + licenseSeed % LICENSES;
        if (!voidedByTransfer[licenseId] || jobIds.length == 0) return;
        calls["submitWithTransferredLicense"]++;
        uint256 jobId = jobIds[jobSeed % jobIds.length];
        uint256[] memory ids = new uint256[](1);
        ids[0] = licenseId;
        uint256 votesBefore = registry.getJob(jobId).voteCount;
        vm.prank(operators[operatorBeforeTransfer[licenseId]]);
        try registry.submitResults(_submission(jobId, ids, 183, 1)) {
            if (registry.getJob(jobId).voteCount != votesBefore) doubleVoteAccepted = true;
        } catch {
            // Skipped, never reverted, also for a license that voted on the job before its transfer.
            unexpectedOutcome = true;
        }
    }

    /// @dev A license changes hands; its delegation must be void until the new owner delegates again.
    function transferLicense(uint256 licenseSeed) external useTime {
        calls["transferLicense"]++;
        uint256 licenseId = 1 + licenseSeed % LICENSES;
        if (!voidedByTransfer[licenseId]) operatorBeforeTransfer[licenseId] = delegatedTo[licenseId];
        address from = license.ownerOf(licenseId);
        address to = from == owners[0] ? owners[1] : owners[0];
        vm.prank(from);
        license.transferFrom(from, to, licenseId);
        delegatedTo[licenseId] = NO_OPERATOR;
        voidedByTransfer[licenseId] = true;
    }

    function redelegate(uint256 licenseSeed, uint256 operatorSeed) external useTime {
        calls["redelegate"]++;
        _delegate(1 + licenseSeed % LICENSES, operatorSeed % operators.length);
    }

    function expire(uint256 jobSeed) external useTime {
        if (jobIds.length == 0) return;
        uint256 jobId = jobIds[jobSeed % jobIds.length];
        bool expirable = !endedInModel[jobId] && currentTime > deadlineOf[jobId];
        try registry.expireJob(jobId) {
            if (!expirable) unexpectedOutcome = true;
            endedInModel[jobId] = true;
            calls["expire"]++;
        } catch {
            if (expirable) unexpectedOutcome = true;
        }
    }

    /// @dev The consumer takes free collateral out and puts part of it back; it must always get its own
    /// tokens and nobody else's.
    function cycleCollateral(uint256 withdrawAmount, uint256 depositAmount) external useTime {
        withdrawAmount = bound(withdrawAmount, 0, registry.collateralOf(consumer).available);
        if (withdrawAmount != 0) {
            calls["withdrawCollateral"]++;
            vm.prank(consumer);
            registry.withdrawCollateral(withdrawAmount);
            consumerStakedBalance += withdrawAmount;
        }
        depositAmount = bound(depositAmount, 0, consumerStakedBalance);
        if (depositAmount != 0) {
            calls["depositCollateral"]++;
            IStakedToken staked = registry.STAKED_TOKEN();
            vm.prank(consumer);
            staked.approve(address(registry), depositAmount);
            vm.prank(consumer);
            registry.depositCollateral(depositAmount);
            consumerStakedBalance -= depositAmount;
        }
    }

    function claimFees(uint256 licenseSeed) external useTime {
        uint256 licenseId = 1 + licenseSeed % LICENSES;
        uint256 claimable = registry.claimableFees(licenseId);
        if (claimable == 0) return;
        calls["claimFees"]++;
        uint256[] memory ids = new uint256[](1);
        ids[0] = licenseId;
        vm.prank(license.ownerOf(licenseId));
        registry.claimFees(ids);
        feesClaimed += claimable;
    }

    /*//////////////////////////////////////////////////////////////
                                HELPERS
    //////////////////////////////////////////////////////////////*/

    function _warpTo(uint256 time) internal {
        currentTime = time;
        vm.warp(currentTime);
        // Nodes keep beating, as running nodes do; liveness lapses are unit-tested.
        for (uint256 i = 0; i < operators.length; ++i) {
            vm.prank(operators[i]);
            nodeRegistry.heartbeat(1);
        }
    }

    function _delegate(uint256 licenseId, uint256 operatorIndex) internal {
        uint256[] memory ids = new uint256[](1);
        ids[0] = licenseId;
        vm.prank(license.ownerOf(licenseId));
        nodeRegistry.delegate(ids, operators[operatorIndex]);
        delegatedTo[licenseId] = operatorIndex;
        voidedByTransfer[licenseId] = false;
    }

    function _licensesOf(uint256 operatorIndex) internal view returns (uint256[] memory ids) {
        uint256 count;
        for (uint256 licenseId = 1; licenseId <= LICENSES; ++licenseId) {
            if (delegatedTo[licenseId] == operatorIndex) ++count;
        }
        ids = new uint256[](count);
        count = 0;
        for (uint256 licenseId = 1; licenseId <= LICENSES; ++licenseId) {
            if (delegatedTo[licenseId] == operatorIndex) ids[count++] = licenseId;
        }
    }

    function _submission(
        uint256 jobId,
        uint256[] memory licenseIds,
        uint256 answer,
        uint64 sourceBlock
    ) internal view returns (IVerificationRegistry.Submission[] memory batch) {
        batch = new IVerificationRegistry.Submission[](1);
        batch[0] = IVerificationRegistry.Submission({
            jobId: jobId,
            licenseIds: licenseIds,
            owner: ownerOf[jobId],
            asset: ASSET,
            balance: answer,
            queryResultHash: keccak256(abi.encode(answer)),
            sourceBlock: sourceBlock
        });
    }

    /// @dev After accepted votes: the job is finalized exactly when some answer reached the quorum.
    function _checkFinalization(uint256 jobId, uint256 answer) internal {
        IVerificationRegistry.Result memory result = registry.getResult(jobId);
        bool finalized = result.status == IVerificationRegistry.JobStatus.Finalized;
        bool reached = tally[jobId][answer] >= quorum;
        if (finalized && (!reached || result.balance != answer || result.queryResultHash != keccak256(abi.encode(answer)))) {
            finalizedBelowQuorum = true;
        }
        if (reached && !finalized) quorumWithoutFinalization = true;
        if (finalized) {
            endedInModel[jobId] = true;
            feesOfFinalizedJobs += feeOf[jobId];
            votesOnFinalizedJobs += votesInModel[jobId];
            uint256 latest = latestJob[chainOf[jobId]][ownerOf[jobId]];
            if (jobId > latest) latestJob[chainOf[jobId]][ownerOf[jobId]] = jobId;
        }
    }

    /// @dev A skipped submission must change nothing (a finalized job keeps no vote count to compare).
    function _checkUnchanged(uint256 jobId) internal {
        calls["submit.ignored"]++;
        IVerificationRegistry.JobView memory job = registry.getJob(jobId);
        if (job.status != IVerificationRegistry.JobStatus.Finalized && job.voteCount != votesInModel[jobId]) {
            unexpectedOutcome = true;
        }
    }
}
