// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AccessControlDefaultAdminRules } from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { SafeERC20 } from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import { ReentrancyGuard } from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

import { INodeLicense } from "./interfaces/INodeLicense.sol";
import { INodeRegistry } from "./interfaces/INodeRegistry.sol";
import { IStakedToken } from "./interfaces/IStakedToken.sol";
import { IVerificationConsumer, IVerificationRegistry } from "./interfaces/IVerificationRegistry.sol";

/// @title VerificationRegistry
/// @notice See {IVerificationRegistry}.
/// @dev Gas layout. A job is six storage slots, all written by the requester: the two that votes update
/// (the first candidate result and the vote list head) are initialised to non-zero sentinels, so a node's
/// vote rewrites warm-priced existing slots instead of paying for fresh ones. Votes are packed 56 bits
/// each (license id 48 bits, candidate index 8 bits): four in the head slot beside the vote and candidate
/// counts, four per overflow slot after that, at most `MAX_VOTES_PER_JOB` in all, which bounds every loop
/// over a job's votes. Agreement is on keccak256(balance, queryResult); the first distinct result is kept
/// in the job, later distinct ones (disagreements) in a side mapping.
contract VerificationRegistry is AccessControlDefaultAdminRules, ReentrancyGuard, IVerificationRegistry {
    using SafeCast for uint256;
    using SafeERC20 for IERC20;
    using SafeERC20 for IStakedToken;

    /*//////////////////////////////////////////////////////////////
                                 TYPES
    //////////////////////////////////////////////////////////////*/

    // solhint-disable-next-line gas-struct-packing
    struct Job {
        // slot 0
        address requester;
        uint64 deadline;
        JobStatus status;
        uint8 chain;
        uint8 quorum;
        // slot 1
        bytes32 owner;
        // slot 2
        bytes32 asset;
        // slot 3
        uint96 fee;
        uint32 callbackGasLimit;
        uint64 sourceBlock;
        uint64 finalizedAt;
        // slot 4: the first distinct result hash (a sentinel until the first vote)
        bytes32 firstCandidate;
        // slot 5: vote count (bits 0-7), candidate count (8-15), sentinel (16), votes 0-3 (from bit 24)
        uint256 votesHead;
    }

    /// @dev A job's votes, unpacked in memory. `votes[i] = licenseId << 8 | candidateIndex`.
    struct VoteBook {
        uint256 voteCount;
        uint256 candidateCount;
        uint256[] votes;
    }

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    uint8 internal constant _CHAIN_ETHEREUM = 0;
    uint8 internal constant _CHAIN_SOLANA = 1;

    /// @inheritdoc IVerificationRegistry
    bytes32 public constant REWARDS_FUNDER_ROLE = keccak256("REWARDS_FUNDER_ROLE");

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MAX_VOTES_PER_JOB = 16;

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MAX_QUORUM = 8;

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MAX_QUERY_RESULT_LENGTH = 4096;

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MAX_CALLBACK_GAS_LIMIT = 1_000_000;

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MIN_JOB_TIMEOUT = 1 minutes;

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MAX_JOB_TIMEOUT = 7 days;

    /// @dev Gas kept back, beyond the 1/64 rule, for the code around the callback.
    uint256 internal constant _CALLBACK_GAS_BUFFER = 10_000;

    bytes32 internal constant _NO_CANDIDATE = bytes32(uint256(1));
    uint256 internal constant _HEAD_SENTINEL = 1 << 16;
    uint256 internal constant _HEAD_VOTES_OFFSET = 24;
    uint256 internal constant _VOTE_BITS = 56;
    uint256 internal constant _VOTE_MASK = (1 << 56) - 1;
    uint256 internal constant _VOTES_PER_WORD = 4;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    IStakedToken public immutable STAKED_TOKEN;

    /// @inheritdoc IVerificationRegistry
    IERC20 public immutable PRIMARY_TOKEN;

    /// @inheritdoc IVerificationRegistry
    INodeRegistry public immutable NODE_REGISTRY;

    /// @inheritdoc IVerificationRegistry
    uint256 public immutable EPOCH_DURATION;

    /// @inheritdoc IVerificationRegistry
    uint256 public immutable EPOCHS_START;

    INodeLicense internal immutable _LICENSE;

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    uint256 public requestFee;

    /// @inheritdoc IVerificationRegistry
    uint256 public quorum;

    /// @inheritdoc IVerificationRegistry
    uint256 public jobTimeout;

    /// @inheritdoc IVerificationRegistry
    uint256 public nextJobId = 1;

    /// @notice Staked tokens burned for the fees of finalized jobs (equal to the primary tokens credited).
    uint256 public totalFeesBurned;

    mapping(uint256 jobId => Job job) internal _jobs;

    mapping(uint256 jobId => mapping(uint256 word => uint256 packedVotes)) internal _overflowVotes;

    mapping(uint256 jobId => mapping(uint256 index => bytes32 resultHash)) internal _extraCandidates;

    mapping(uint256 jobId => uint256 balance) internal _balances;

    mapping(uint256 jobId => bytes queryResult) internal _queryResults;

    mapping(bytes32 subject => uint256 jobId) internal _latestJobs;

    mapping(address consumer => Collateral collateral) internal _collateral;

    mapping(address consumer => uint256 gasLimit) internal _callbackGasLimits;

    mapping(uint256 licenseId => uint256 amount) internal _claimableFees;

    mapping(uint256 epoch => uint256 amount) internal _epochPools;

    mapping(uint256 epoch => uint256 votes) internal _epochTotalVotes;

    mapping(uint256 epoch => mapping(uint256 licenseId => uint256 votes)) internal _epochVotes;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param stakedToken The staked token (this contract needs its PROTOCOL_ROLE).
    /// @param nodeRegistry The node registry (this contract needs its RECORDER_ROLE).
    /// @param epochDuration The length of a reward epoch, in seconds.
    /// @param requestFee_ The initial fee per job, in staked tokens.
    /// @param quorum_ The initial quorum.
    /// @param jobTimeout_ The initial job time limit, in seconds.
    /// @param admin The governance account.
    /// @param adminTransferDelay The delay of the two-step admin transfer, in seconds.
    constructor(
        IStakedToken stakedToken,
        INodeRegistry nodeRegistry,
        uint256 epochDuration,
        uint256 requestFee_,
        uint256 quorum_,
        uint256 jobTimeout_,
        address admin,
        uint48 adminTransferDelay
    ) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        if (address(stakedToken) == address(0) || address(nodeRegistry) == address(0)) {
            revert VerificationRegistry_ZeroAddress();
        }
        if (epochDuration == 0) revert VerificationRegistry_InvalidEpochDuration();
        STAKED_TOKEN = stakedToken;
        PRIMARY_TOKEN = stakedToken.PRIMARY_TOKEN();
        NODE_REGISTRY = nodeRegistry;
        _LICENSE = nodeRegistry.LICENSE();
        EPOCH_DURATION = epochDuration;
        EPOCHS_START = block.timestamp;
        _setRequestFee(requestFee_);
        _setQuorum(quorum_);
        _setJobTimeout(jobTimeout_);
    }

    /*//////////////////////////////////////////////////////////////
                     EXTERNAL FUNCTIONS: CONSUMERS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    function depositCollateral(uint256 amount) external nonReentrant {
        _checkDeposit(msg.sender, amount);
        STAKED_TOKEN.safeTransferFrom(msg.sender, address(this), amount);
        _creditCollateral(msg.sender, amount, false);
    }

    /// @inheritdoc IVerificationRegistry
    function stakeCollateral(address consumer, uint256 amount) external nonReentrant {
        _checkDeposit(consumer, amount);
        PRIMARY_TOKEN.safeTransferFrom(msg.sender, address(this), amount);
        PRIMARY_TOKEN.forceApprove(address(STAKED_TOKEN), amount);
        STAKED_TOKEN.stakeFor(address(this), amount);
        _creditCollateral(consumer, amount, true);
    }

    /// @inheritdoc IVerificationRegistry
    function withdrawCollateral(uint256 amount) external nonReentrant {
        if (amount == 0) revert VerificationRegistry_ZeroAmount();
        Collateral storage collateral = _collateral[msg.sender];
        uint256 available = collateral.available;
        if (available < amount) revert VerificationRegistry_InsufficientCollateral(msg.sender, available, amount);
        collateral.available = uint128(available - amount);
        // Only back to the consumer: a withdrawal to another address would move staked tokens between
        // two ordinary accounts through this contract.
        STAKED_TOKEN.safeTransfer(msg.sender, amount);
        emit CollateralWithdrawn(msg.sender, amount);
    }

    /// @inheritdoc IVerificationRegistry
    function setCallbackGasLimit(uint256 gasLimit) external {
        if (gasLimit > MAX_CALLBACK_GAS_LIMIT) revert VerificationRegistry_InvalidCallbackGasLimit(gasLimit);
        uint256 oldLimit = _callbackGasLimits[msg.sender];
        _callbackGasLimits[msg.sender] = gasLimit;
        emit CallbackGasLimitUpdated(msg.sender, oldLimit, gasLimit);
    }

    /// @inheritdoc IVerificationRegistry
    function requestEvmBalance(address owner, address token) external returns (uint256 jobId) {
        return _request(_CHAIN_ETHEREUM, bytes32(uint256(uint160(owner))), bytes32(uint256(uint160(token))));
    }

    /// @inheritdoc IVerificationRegistry
    function requestSvmBalance(bytes32 owner, bytes32 mint) external returns (uint256 jobId) {
        return _request(_CHAIN_SOLANA, owner, mint);
    }

    /// @inheritdoc IVerificationRegistry
    function expireJob(uint256 jobId) external {
        Job storage job = _jobs[jobId];
        JobStatus status = job.status;
        if (status != JobStatus.Open) revert VerificationRegistry_JobNotOpen(jobId, status);
        if (block.timestamp <= job.deadline) revert VerificationRegistry_JobNotExpired(jobId, job.deadline);

        job.status = JobStatus.Expired;
        uint256 fee = job.fee;
        address requester = job.requester;
        Collateral storage collateral = _collateral[requester];
        collateral.reserved -= uint128(fee);
        collateral.available += uint128(fee);
        emit JobExpired(jobId, requester, fee);
    }

    /*//////////////////////////////////////////////////////////////
                       EXTERNAL FUNCTIONS: NODES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    function submitResults(Submission[] calldata submissions) external nonReentrant {
        for (uint256 i = 0; i < submissions.length; ++i) {
            _submit(submissions[i]);
        }
    }

    /// @inheritdoc IVerificationRegistry
    function claimFees(uint256[] calldata licenseIds) external nonReentrant {
        uint256 total;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            _checkLicenseOwner(licenseId);
            uint256 amount = _claimableFees[licenseId];
            if (amount == 0) continue;
            delete _claimableFees[licenseId];
            total += amount;
            emit FeesClaimed(licenseId, msg.sender, amount);
        }
        if (total == 0) revert VerificationRegistry_NothingToClaim();
        PRIMARY_TOKEN.safeTransfer(msg.sender, total);
    }

    /// @inheritdoc IVerificationRegistry
    function claimRewards(uint256 epoch, uint256[] calldata licenseIds) external nonReentrant {
        uint256 current = currentEpoch();
        if (epoch >= current) revert VerificationRegistry_EpochNotEnded(epoch, current);
        uint256 pool = _epochPools[epoch];
        uint256 totalVotes = _epochTotalVotes[epoch];
        uint256 total;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            _checkLicenseOwner(licenseId);
            uint256 votes = _epochVotes[epoch][licenseId];
            if (votes == 0) continue;
            delete _epochVotes[epoch][licenseId];
            // Rounded down: the pool never pays out more than it holds.
            uint256 amount = pool * votes / totalVotes;
            total += amount;
            emit RewardsClaimed(epoch, licenseId, msg.sender, amount);
        }
        if (total == 0) revert VerificationRegistry_NothingToClaim();
        PRIMARY_TOKEN.forceApprove(address(STAKED_TOKEN), total);
        STAKED_TOKEN.stakeFor(msg.sender, total);
    }

    /*//////////////////////////////////////////////////////////////
                    EXTERNAL FUNCTIONS: GOVERNANCE
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    function fundEpochRewards(uint256 epoch, uint256 amount) external onlyRole(REWARDS_FUNDER_ROLE) nonReentrant {
        if (amount == 0) revert VerificationRegistry_ZeroAmount();
        uint256 current = currentEpoch();
        if (epoch < current) revert VerificationRegistry_EpochEnded(epoch, current);
        PRIMARY_TOKEN.safeTransferFrom(msg.sender, address(this), amount);
        _epochPools[epoch] += amount;
        emit EpochRewardsFunded(epoch, msg.sender, amount);
    }

    /// @inheritdoc IVerificationRegistry
    function rollOverEpochRewards(uint256 epoch) external {
        uint256 current = currentEpoch();
        if (epoch >= current) revert VerificationRegistry_EpochNotEnded(epoch, current);
        uint256 pool = _epochPools[epoch];
        if (pool == 0 || _epochTotalVotes[epoch] != 0) revert VerificationRegistry_CannotRollOver(epoch);
        delete _epochPools[epoch];
        _epochPools[current] += pool;
        emit EpochRewardsRolledOver(epoch, current, pool);
    }

    /// @inheritdoc IVerificationRegistry
    function setRequestFee(uint256 fee) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setRequestFee(fee);
    }

    /// @inheritdoc IVerificationRegistry
    function setQuorum(uint256 quorum_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setQuorum(quorum_);
    }

    /// @inheritdoc IVerificationRegistry
    function setJobTimeout(uint256 timeout) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setJobTimeout(timeout);
    }

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    function collateralOf(address consumer) external view returns (Collateral memory) {
        return _collateral[consumer];
    }

    /// @inheritdoc IVerificationRegistry
    function callbackGasLimitOf(address consumer) external view returns (uint256) {
        return _callbackGasLimits[consumer];
    }

    /// @inheritdoc IVerificationRegistry
    function getJob(uint256 jobId) external view returns (JobView memory) {
        Job storage job = _jobs[jobId];
        return JobView({
            requester: job.requester,
            chain: job.chain,
            status: job.status,
            quorum: job.quorum,
            deadline: job.deadline,
            owner: job.owner,
            asset: job.asset,
            fee: job.fee,
            voteCount: job.votesHead & 0xff,
            callbackGasLimit: job.callbackGasLimit
        });
    }

    /// @inheritdoc IVerificationRegistry
    function hasVoted(uint256 jobId, uint256 licenseId) external view returns (bool) {
        VoteBook memory book = _loadVotes(jobId, _jobs[jobId].votesHead, 0);
        return _indexOfLicense(book, licenseId) != type(uint256).max;
    }

    /// @inheritdoc IVerificationRegistry
    function getResult(uint256 jobId)
        external
        view
        returns (JobStatus status, uint256 balance, bytes memory queryResult, uint64 sourceBlock, uint64 finalizedAt)
    {
        Job storage job = _jobs[jobId];
        return (job.status, _balances[jobId], _queryResults[jobId], job.sourceBlock, job.finalizedAt);
    }

    /// @inheritdoc IVerificationRegistry
    function latestBalance(
        uint8 chain,
        bytes32 owner,
        bytes32 asset
    ) external view returns (uint256 balance, uint64 sourceBlock, uint64 finalizedAt, uint256 jobId) {
        jobId = _latestJobs[_subject(chain, owner, asset)];
        if (jobId == 0) revert VerificationRegistry_NoResult(chain, owner, asset);
        Job storage job = _jobs[jobId];
        return (_balances[jobId], job.sourceBlock, job.finalizedAt, jobId);
    }

    /// @inheritdoc IVerificationRegistry
    function claimableFees(uint256 licenseId) external view returns (uint256) {
        return _claimableFees[licenseId];
    }

    /// @inheritdoc IVerificationRegistry
    function epochRewardInfo(
        uint256 epoch,
        uint256 licenseId
    ) external view returns (uint256 pool, uint256 totalVotes, uint256 licenseVotes) {
        return (_epochPools[epoch], _epochTotalVotes[epoch], _epochVotes[epoch][licenseId]);
    }

    /// @inheritdoc IVerificationRegistry
    function currentEpoch() public view returns (uint256) {
        return (block.timestamp - EPOCHS_START) / EPOCH_DURATION;
    }

    /*//////////////////////////////////////////////////////////////
                          PRIVATE: REQUESTS
    //////////////////////////////////////////////////////////////*/

    function _checkDeposit(address consumer, uint256 amount) private pure {
        if (amount == 0) revert VerificationRegistry_ZeroAmount();
        if (consumer == address(0)) revert VerificationRegistry_ZeroAddress();
    }

    function _creditCollateral(address consumer, uint256 amount, bool staked) private {
        _collateral[consumer].available += amount.toUint128();
        emit CollateralDeposited(consumer, msg.sender, amount, staked);
    }

    function _request(uint8 chain, bytes32 owner, bytes32 asset) private returns (uint256 jobId) {
        if (owner == bytes32(0) || asset == bytes32(0)) revert VerificationRegistry_ZeroAddress();
        uint256 fee = requestFee;
        Collateral storage collateral = _collateral[msg.sender];
        uint256 available = collateral.available;
        if (available < fee) revert VerificationRegistry_InsufficientCollateral(msg.sender, available, fee);
        collateral.available = uint128(available - fee);
        collateral.reserved += uint128(fee);

        jobId = nextJobId++;
        _jobs[jobId] = Job({
            requester: msg.sender,
            deadline: uint64(block.timestamp + jobTimeout),
            status: JobStatus.Open,
            chain: chain,
            quorum: uint8(quorum),
            owner: owner,
            asset: asset,
            fee: uint96(fee),
            callbackGasLimit: uint32(_callbackGasLimits[msg.sender]),
            sourceBlock: 0,
            finalizedAt: 0,
            firstCandidate: _NO_CANDIDATE,
            votesHead: _HEAD_SENTINEL
        });
        emit VerificationRequested(jobId, msg.sender, chain, owner, asset, fee);
    }

    /*//////////////////////////////////////////////////////////////
                           PRIVATE: VOTES
    //////////////////////////////////////////////////////////////*/

    function _submit(Submission calldata submission) private {
        uint256 jobId = submission.jobId;
        Job storage job = _jobs[jobId];
        JobStatus status = job.status;
        if (status == JobStatus.None) revert VerificationRegistry_UnknownJob(jobId);
        uint256 newVotes = submission.licenseIds.length;
        if (newVotes == 0) revert VerificationRegistry_NoLicenses(jobId);
        if (submission.queryResult.length > MAX_QUERY_RESULT_LENGTH) {
            revert VerificationRegistry_QueryResultTooLong(submission.queryResult.length, MAX_QUERY_RESULT_LENGTH);
        }
        // What other parties can cause (another node finalizing first, time running out, the job filling
        // up, a license changing hands) skips this submission, never the whole batch.
        if (status != JobStatus.Open) {
            return _ignore(jobId, status == JobStatus.Finalized ? IgnoreReason.JobFinalized : IgnoreReason.JobExpired);
        }
        if (block.timestamp > job.deadline) return _ignore(jobId, IgnoreReason.DeadlinePassed);
        VoteBook memory book = _loadVotes(jobId, job.votesHead, newVotes);
        if (book.voteCount + newVotes > MAX_VOTES_PER_JOB) return _ignore(jobId, IgnoreReason.VoteLimitReached);
        // Counts the submissions only if the caller is the live operator of every license.
        if (!NODE_REGISTRY.recordSubmissions(msg.sender, submission.licenseIds)) {
            return _ignore(jobId, IgnoreReason.LicenseNotLive);
        }

        bytes32 resultHash = keccak256(abi.encode(submission.balance, submission.queryResult));
        uint256 candidate = _candidateIndex(jobId, job, book, resultHash);
        uint256 firstNewVote = book.voteCount;
        _appendVotes(book, submission, candidate, resultHash);
        _storeVotes(jobId, job, book, firstNewVote);

        if (_countVotesFor(book, candidate) >= job.quorum) {
            _finalize(jobId, job, book, candidate, submission);
        }
    }

    function _ignore(uint256 jobId, IgnoreReason reason) private {
        emit SubmissionIgnored(jobId, msg.sender, reason);
    }

    /// @dev Adds one vote per license of `submission` for `candidate`; a license may vote once per job.
    function _appendVotes(
        VoteBook memory book,
        Submission calldata submission,
        uint256 candidate,
        bytes32 resultHash
    ) private {
        for (uint256 i = 0; i < submission.licenseIds.length; ++i) {
            uint256 licenseId = submission.licenseIds[i];
            if (_indexOfLicense(book, licenseId) != type(uint256).max) {
                revert VerificationRegistry_AlreadyVoted(submission.jobId, licenseId);
            }
            book.votes[book.voteCount++] = (uint256(licenseId.toUint48()) << 8) | candidate;
            emit VoteSubmitted(submission.jobId, licenseId, msg.sender, resultHash, submission.sourceBlock);
        }
    }

    /// @dev The index of `resultHash` among the job's distinct results, adding it when new.
    function _candidateIndex(
        uint256 jobId,
        Job storage job,
        VoteBook memory book,
        bytes32 resultHash
    ) private returns (uint256 index) {
        if (book.candidateCount == 0) {
            job.firstCandidate = resultHash;
            book.candidateCount = 1;
            return 0;
        }
        if (job.firstCandidate == resultHash) return 0;
        for (index = 1; index < book.candidateCount; ++index) {
            if (_extraCandidates[jobId][index] == resultHash) return index;
        }
        // A new distinct result; there are never more candidates than votes, so `index` fits 8 bits.
        _extraCandidates[jobId][index] = resultHash;
        book.candidateCount = index + 1;
    }

    /// @dev Unpacks a job's votes into memory, with room for `extra` more.
    function _loadVotes(uint256 jobId, uint256 head, uint256 extra) private view returns (VoteBook memory book) {
        book.voteCount = head & 0xff;
        book.candidateCount = (head >> 8) & 0xff;
        book.votes = new uint256[](book.voteCount + extra);
        uint256 word = head >> _HEAD_VOTES_OFFSET;
        for (uint256 i = 0; i < book.voteCount; ++i) {
            uint256 slot = i % _VOTES_PER_WORD;
            if (slot == 0 && i != 0) word = _overflowVotes[jobId][i / _VOTES_PER_WORD];
            book.votes[i] = (word >> (slot * _VOTE_BITS)) & _VOTE_MASK;
        }
    }

    /// @dev Packs the votes back: the head slot always (counts change), overflow words from `firstNew` on.
    function _storeVotes(uint256 jobId, Job storage job, VoteBook memory book, uint256 firstNew) private {
        uint256 wordCount = (book.voteCount + _VOTES_PER_WORD - 1) / _VOTES_PER_WORD;
        for (uint256 w = firstNew / _VOTES_PER_WORD; w < wordCount; ++w) {
            uint256 word;
            for (uint256 slot = 0; slot < _VOTES_PER_WORD; ++slot) {
                uint256 i = w * _VOTES_PER_WORD + slot;
                if (i < book.voteCount) word |= book.votes[i] << (slot * _VOTE_BITS);
            }
            if (w != 0) _overflowVotes[jobId][w] = word;
            else job.votesHead = (word << _HEAD_VOTES_OFFSET) | _HEAD_SENTINEL | (book.candidateCount << 8) | book.voteCount;
        }
        if (firstNew >= _VOTES_PER_WORD) {
            // Only overflow words changed above; the head still needs the new counts.
            uint256 head = job.votesHead;
            job.votesHead = (head & ~uint256(0xffff)) | (book.candidateCount << 8) | book.voteCount;
        }
    }

    function _indexOfLicense(VoteBook memory book, uint256 licenseId) private pure returns (uint256) {
        for (uint256 i = 0; i < book.voteCount; ++i) {
            if (book.votes[i] >> 8 == licenseId) return i;
        }
        return type(uint256).max;
    }

    function _countVotesFor(VoteBook memory book, uint256 candidate) private pure returns (uint256 count) {
        for (uint256 i = 0; i < book.voteCount; ++i) {
            if (book.votes[i] & 0xff == candidate) ++count;
        }
    }

    /*//////////////////////////////////////////////////////////////
                        PRIVATE: FINALIZATION
    //////////////////////////////////////////////////////////////*/

    function _finalize(
        uint256 jobId,
        Job storage job,
        VoteBook memory book,
        uint256 winner,
        Submission calldata submission
    ) private {
        job.status = JobStatus.Finalized;
        job.sourceBlock = submission.sourceBlock;
        job.finalizedAt = uint64(block.timestamp);
        _balances[jobId] = submission.balance;
        _queryResults[jobId] = submission.queryResult;

        bytes32 subject = _subject(job.chain, job.owner, job.asset);
        // A job requested earlier (so read earlier) and finalizing late never replaces a newer one. Job ids
        // order the reads; the reported source block does not, since the finalizing node alone picks it.
        if (_latestJobs[subject] < jobId) _latestJobs[subject] = jobId;

        uint256 fee = job.fee;
        _collateral[job.requester].reserved -= uint128(fee);
        _settleVotes(book, winner, fee);
        if (fee != 0) {
            totalFeesBurned += fee;
            // Burns the fee's staked tokens; their backing primary tokens come here for the claims.
            STAKED_TOKEN.burnForService(fee, address(this));
        }

        emit VerificationFulfilled(
            jobId, job.chain, job.owner, job.asset, submission.balance, submission.queryResult, submission.sourceBlock
        );
        _callBack(jobId, job, submission);
    }

    /// @dev Splits the fee among the agreeing licenses (the first one takes the rounding remainder), counts
    /// their epoch reward votes, and records every voter's outcome in the node registry.
    function _settleVotes(VoteBook memory book, uint256 winner, uint256 fee) private {
        uint256 agreedCount = _countVotesFor(book, winner);
        uint256[] memory agreed = new uint256[](agreedCount);
        uint256[] memory disagreed = new uint256[](book.voteCount - agreedCount);
        uint256 a;
        uint256 d;
        for (uint256 i = 0; i < book.voteCount; ++i) {
            uint256 licenseId = book.votes[i] >> 8;
            if (book.votes[i] & 0xff == winner) agreed[a++] = licenseId;
            else disagreed[d++] = licenseId;
        }

        uint256 share = fee / agreedCount;
        uint256 epoch = currentEpoch();
        _claimableFees[agreed[0]] += fee - share * (agreedCount - 1);
        for (uint256 i = 0; i < agreedCount; ++i) {
            if (i != 0) _claimableFees[agreed[i]] += share;
            ++_epochVotes[epoch][agreed[i]];
        }
        _epochTotalVotes[epoch] += agreedCount;
        NODE_REGISTRY.recordOutcomes(agreed, disagreed);
    }

    /// @dev Calls the consumer with exactly its gas limit and without copying return data (a hostile
    /// consumer can neither revert finalization nor bloat it); a failure only emits `CallbackFailed`.
    function _callBack(uint256 jobId, Job storage job, Submission calldata submission) private {
        uint256 gasLimit = job.callbackGasLimit;
        address consumer = job.requester;
        if (gasLimit == 0 || consumer.code.length == 0) return;
        // EIP-150 forwards at most 63/64 of the gas left; make sure that is at least the limit.
        if (gasleft() < gasLimit + gasLimit / 63 + _CALLBACK_GAS_BUFFER) {
            revert VerificationRegistry_InsufficientGasForCallback(jobId, gasLimit);
        }
        bytes memory data = abi.encodeCall(
            IVerificationConsumer.onVerificationFulfilled,
            (jobId, job.chain, job.owner, job.asset, submission.balance, submission.sourceBlock)
        );
        bool success;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            success := call(gasLimit, consumer, 0, add(data, 0x20), mload(data), 0, 0)
        }
        if (!success) emit CallbackFailed(jobId, consumer);
    }

    /*//////////////////////////////////////////////////////////////
                          PRIVATE: HELPERS
    //////////////////////////////////////////////////////////////*/

    function _checkLicenseOwner(uint256 licenseId) private view {
        if (_LICENSE.ownerOf(licenseId) != msg.sender) {
            revert VerificationRegistry_NotLicenseOwner(licenseId, msg.sender);
        }
    }

    function _subject(uint8 chain, bytes32 owner, bytes32 asset) private pure returns (bytes32) {
        return keccak256(abi.encode(chain, owner, asset));
    }

    function _setRequestFee(uint256 fee) private {
        if (fee > type(uint96).max) revert VerificationRegistry_InvalidFee(fee);
        uint256 oldFee = requestFee;
        requestFee = fee;
        emit RequestFeeUpdated(oldFee, fee);
    }

    function _setQuorum(uint256 quorum_) private {
        if (quorum_ == 0 || quorum_ > MAX_QUORUM) revert VerificationRegistry_InvalidQuorum(quorum_);
        uint256 oldQuorum = quorum;
        quorum = quorum_;
        emit QuorumUpdated(oldQuorum, quorum_);
    }

    function _setJobTimeout(uint256 timeout) private {
        if (timeout < MIN_JOB_TIMEOUT || timeout > MAX_JOB_TIMEOUT) revert VerificationRegistry_InvalidJobTimeout(timeout);
        uint256 oldTimeout = jobTimeout;
        jobTimeout = timeout;
        emit JobTimeoutUpdated(oldTimeout, timeout);
    }
}
