// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AccessControlDefaultAdminRules } from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { SafeERC20 } from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import { ReentrancyGuardTransient } from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";

import { INodeLicense } from "./interfaces/INodeLicense.sol";
import { INodeRegistry } from "./interfaces/INodeRegistry.sol";
import { IStakedToken } from "./interfaces/IStakedToken.sol";
import { IVerificationConsumer, IVerificationRegistry } from "./interfaces/IVerificationRegistry.sol";

/// @title VerificationRegistry
/// @notice See {IVerificationRegistry}.
/// @dev Gas layout. A job is three storage slots, all written by its request, so its first two votes and,
/// when they agree, its finalization write no fresh one of their own (fresh slots cost 22k gas, rewriting a
/// written one 5k; docs/verification.md lists the fresh slots that remain):
/// - `head`: requester, a time (the deadline while the job is open, the finalization time once it is
///   finalized), status, chain, quorum;
/// - `body`: while open, the fee, the callback gas limit, the vote and candidate counts and the first two
///   votes (56 bits each: license id 48 bits, candidate index 8 bits); once finalized, the source block
///   (64 bits) and the balance (192 bits; a larger balance, which no real token has but a hostile
///   contract can report, is kept whole in `_largeBalances`);
/// - `commitment`: while the job is open, the high 128 bits of its subject keccak256(chain, owner, asset),
///   which every vote is checked against, and from the first vote on the low 128 bits of its first distinct
///   answer keccak256(subject, balance, queryResultHash); once finalized, the query result hash. 128 bits
///   each: matching either with another subject or answer takes a second preimage, about 2^128 hashes.
/// Distinct answers after the first (disagreement only) live in `_candidates` until finalization clears
/// them. Votes beyond two go four to an overflow word, at most `MAX_VOTES_PER_JOB` in all, which bounds
/// every loop over a job's votes and answers.
/// Per license, the fee credit, the current epoch's agreeing votes and the agreed and disagreed counts
/// share one slot; an epoch's votes move to a per-epoch slot only when the license first earns in a later
/// epoch.
contract VerificationRegistry is AccessControlDefaultAdminRules, ReentrancyGuardTransient, IVerificationRegistry {
    using SafeCast for uint256;
    using SafeERC20 for IERC20;
    using SafeERC20 for IStakedToken;

    /*//////////////////////////////////////////////////////////////
                                 TYPES
    //////////////////////////////////////////////////////////////*/

    // Three slots, as laid out below; the linter's packing hint does not see that slot 0 is full.
    // solhint-disable-next-line gas-struct-packing
    struct Job {
        // slot 0
        address requester;
        uint64 time;
        JobStatus status;
        uint8 chain;
        uint8 quorum;
        // slot 1 (see the contract's notes)
        uint256 body;
        // slot 2
        bytes32 commitment;
    }

    /// @dev A job's votes, unpacked in memory. `votes[i] = licenseId << 8 | candidateIndex`.
    struct VoteBook {
        uint256 voteCount;
        uint256 candidateCount;
        uint256[] votes;
    }

    /// @dev The parameters of new jobs and the job counter: one slot read and written per request.
    struct Config {
        uint96 requestFee;
        uint64 nextJobId;
        uint32 jobTimeout;
    }

    /// @dev A consumer's collateral and callback gas limit: one slot read and written per request.
    struct Consumer {
        uint112 available;
        uint112 reserved;
        uint32 callbackGasLimit;
    }

    /// @dev A license's fee credit (staked tokens), its agreeing votes in `epoch`, and how all its votes
    /// on finalized jobs turned out: one slot, written once per finalization the license voted on.
    struct LicenseAccount {
        uint96 fees;
        uint32 epoch;
        uint64 epochVotes;
        uint32 agreed;
        uint32 disagreed;
    }

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    uint8 internal constant _CHAIN_ETHEREUM = 0;
    uint8 internal constant _CHAIN_SOLANA = 1;

    /// @inheritdoc IVerificationRegistry
    bytes32 public constant REWARDS_FUNDER_ROLE = keccak256("REWARDS_FUNDER_ROLE");

    /// @inheritdoc IVerificationRegistry
    bytes32 public constant ATTESTATION_ROLE = keccak256("ATTESTATION_ROLE");

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MAX_VOTES_PER_JOB = 16;

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MAX_CALLBACK_GAS_LIMIT = 1_000_000;

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MIN_JOB_TIMEOUT = 1 minutes;

    /// @inheritdoc IVerificationRegistry
    uint256 public constant MAX_JOB_TIMEOUT = 7 days;

    /// @dev Gas kept back, beyond the 1/64 rule, for the code around the callback.
    uint256 internal constant _CALLBACK_GAS_BUFFER = 10_000;

    uint256 internal constant _FEE_MASK = (1 << 96) - 1;
    uint256 internal constant _CALLBACK_SHIFT = 96;
    uint256 internal constant _VOTE_COUNT_SHIFT = 128;
    uint256 internal constant _CANDIDATE_COUNT_SHIFT = 136;
    uint256 internal constant _BODY_VOTES_SHIFT = 144;
    uint256 internal constant _BODY_VOTES = 2;
    uint256 internal constant _VOTE_BITS = 56;
    uint256 internal constant _VOTE_MASK = (1 << 56) - 1;
    uint256 internal constant _VOTES_PER_WORD = 4;
    uint256 internal constant _SOURCE_BLOCK_MASK = (1 << 64) - 1;
    uint256 internal constant _BALANCE_SHIFT = 64;
    /// @dev A finalized body's balance field holding this means: the balance is in `_largeBalances`.
    uint256 internal constant _LARGE_BALANCE = (1 << 192) - 1;
    /// @dev A recorded attestation's slot: balance (128 bits), source block (64), issue time (64); a balance
    /// field holding `_LARGE_ATTESTED_BALANCE` means the balance is in `_largeAttestedBalances`.
    uint256 internal constant _ATTESTED_BALANCE_SHIFT = 128;
    uint256 internal constant _LARGE_ATTESTED_BALANCE = (1 << 128) - 1;
    /// @dev An open job's `commitment`: subject in the high half, first answer in the low half.
    uint256 internal constant _LOW_HALF = (1 << 128) - 1;

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

    /// @notice Staked tokens burned for the fees of finalized jobs, as their licenses' owners claimed them.
    uint256 public totalFeesBurned;

    Config internal _config;

    mapping(uint256 jobId => Job job) internal _jobs;

    mapping(uint256 jobId => mapping(uint256 word => uint256 packedVotes)) internal _overflowVotes;

    /// @dev A job's distinct answers after the first (whose digest is in its `commitment`).
    mapping(uint256 jobId => mapping(uint256 index => bytes32 resultHash)) internal _candidates;

    mapping(uint256 jobId => uint256 balance) internal _largeBalances;

    mapping(bytes32 subject => uint256 jobId) internal _latestJobs;

    /// @dev The latest recorded attestation per subject, one packed slot (see `_ATTESTED_BALANCE_SHIFT`).
    mapping(bytes32 subject => uint256 packed) internal _attestedResults;

    mapping(bytes32 subject => uint256 balance) internal _largeAttestedBalances;

    mapping(address consumer => Consumer record) internal _consumers;

    mapping(uint256 licenseId => LicenseAccount account) internal _licenseAccounts;

    mapping(uint256 epoch => uint256 amount) internal _epochPools;

    mapping(uint256 epoch => uint256 votes) internal _epochTotalVotes;

    /// @dev A license's agreeing votes of an epoch before the one in its account.
    mapping(uint256 epoch => mapping(uint256 licenseId => uint256 votes)) internal _epochVotes;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param stakedToken The staked token (this contract needs its PROTOCOL_ROLE).
    /// @param nodeRegistry The node registry (this contract needs its RECORDER_ROLE).
    /// @param epochDuration The length of a reward epoch, in seconds.
    /// @param requestFee_ The initial fee per job, in staked tokens.
    /// @param jobTimeout_ The initial job time limit, in seconds.
    /// @param admin The governance account.
    /// @param adminTransferDelay The delay of the two-step admin transfer, in seconds.
    constructor(
        IStakedToken stakedToken,
        INodeRegistry nodeRegistry,
        uint256 epochDuration,
        uint256 requestFee_,
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
        // Collateral (112 bits) and a license's fee credit (96 bits) are sums of staked tokens, so they fit as
        // long as every token that could ever be staked does. The primary supply is fixed at 10^27 (about
        // 2^90) on L1, and the L2 token holds at most what the bridge locked there; this check refuses a
        // token that could not be ours.
        if (PRIMARY_TOKEN.totalSupply() > type(uint96).max) revert VerificationRegistry_SupplyTooLarge();
        NODE_REGISTRY = nodeRegistry;
        _LICENSE = nodeRegistry.LICENSE();
        EPOCH_DURATION = epochDuration;
        EPOCHS_START = block.timestamp;
        _config.nextJobId = 1;
        _setRequestFee(requestFee_);
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
        Consumer storage consumer = _consumers[msg.sender];
        uint256 available = consumer.available;
        if (available < amount) revert VerificationRegistry_InsufficientCollateral(msg.sender, available, amount);
        consumer.available = uint112(available - amount);
        // Only back to the consumer: a withdrawal to another address would move staked tokens between
        // two ordinary accounts through this contract.
        STAKED_TOKEN.safeTransfer(msg.sender, amount);
        emit CollateralWithdrawn(msg.sender, amount);
    }

    /// @inheritdoc IVerificationRegistry
    function setCallbackGasLimit(uint256 gasLimit) external {
        if (gasLimit > MAX_CALLBACK_GAS_LIMIT) revert VerificationRegistry_InvalidCallbackGasLimit(gasLimit);
        Consumer storage consumer = _consumers[msg.sender];
        uint256 oldLimit = consumer.callbackGasLimit;
        consumer.callbackGasLimit = uint32(gasLimit);
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
        if (block.timestamp <= job.time) revert VerificationRegistry_JobNotExpired(jobId, job.time);

        job.status = JobStatus.Expired;
        uint256 fee = job.body & _FEE_MASK;
        address requester = job.requester;
        Consumer storage consumer = _consumers[requester];
        consumer.reserved -= uint112(fee);
        consumer.available += uint112(fee);
        emit JobExpired(jobId, requester, fee);
    }

    /*//////////////////////////////////////////////////////////////
                    EXTERNAL FUNCTIONS: ATTESTATIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    function recordAttestedResult(
        address payer,
        AttestedResult calldata result,
        uint256[] calldata licenseIds
    ) external onlyRole(ATTESTATION_ROLE) nonReentrant {
        bytes32 subject = _subject(result.chain, result.owner, result.asset);
        uint256 stored = _attestedResults[subject];
        uint64 storedIssuedAt = uint64(stored);
        if (stored != 0 && result.issuedAt <= storedIssuedAt) {
            revert VerificationRegistry_AttestationNotNewer(result.issuedAt, storedIssuedAt);
        }
        uint256 fee = _payAttestationFee(payer, licenseIds);
        uint256 balance = result.balance;
        if (balance >= _LARGE_ATTESTED_BALANCE) {
            _largeAttestedBalances[subject] = balance;
            balance = _LARGE_ATTESTED_BALANCE;
        }
        _attestedResults[subject] =
            (balance << _ATTESTED_BALANCE_SHIFT) | (uint256(result.sourceBlock) << 64) | result.issuedAt;
        _emitAttestationRecorded(payer, result, fee);
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
            LicenseAccount storage account = _licenseAccounts[licenseId];
            uint256 amount = account.fees;
            if (amount == 0) continue;
            account.fees = 0;
            total += amount;
            emit FeesClaimed(licenseId, msg.sender, amount);
        }
        if (total == 0) revert VerificationRegistry_NothingToClaim();
        // The fees' staked tokens, held here since their jobs finalized, are burned, and the primary tokens
        // that backed them are staked again for the owner: one burn per claim, not one per job.
        totalFeesBurned += total;
        STAKED_TOKEN.burnForService(total, address(this));
        _stakeFor(msg.sender, total);
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
            uint256 votes = _takeEpochVotes(epoch, licenseId);
            if (votes == 0) continue;
            // Rounded down: the pool never pays out more than it holds.
            uint256 amount = pool * votes / totalVotes;
            total += amount;
            emit RewardsClaimed(epoch, licenseId, msg.sender, amount);
        }
        if (total == 0) revert VerificationRegistry_NothingToClaim();
        _stakeFor(msg.sender, total);
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
    function setJobTimeout(uint256 timeout) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setJobTimeout(timeout);
    }

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVerificationRegistry
    function requestFee() external view returns (uint256) {
        return _config.requestFee;
    }

    /// @inheritdoc IVerificationRegistry
    function jobTimeout() external view returns (uint256) {
        return _config.jobTimeout;
    }

    /// @inheritdoc IVerificationRegistry
    function nextJobId() external view returns (uint256) {
        return _config.nextJobId;
    }

    /// @inheritdoc IVerificationRegistry
    function collateralOf(address consumer) external view returns (Collateral memory) {
        Consumer storage record = _consumers[consumer];
        return Collateral({ available: record.available, reserved: record.reserved });
    }

    /// @inheritdoc IVerificationRegistry
    function callbackGasLimitOf(address consumer) external view returns (uint256) {
        return _consumers[consumer].callbackGasLimit;
    }

    /// @inheritdoc IVerificationRegistry
    function getJob(uint256 jobId) external view returns (JobView memory view_) {
        Job storage job = _jobs[jobId];
        view_.requester = job.requester;
        view_.chain = job.chain;
        view_.status = job.status;
        view_.quorum = job.quorum;
        if (view_.status == JobStatus.Finalized) return view_;
        uint256 body = job.body;
        view_.deadline = job.time;
        view_.fee = body & _FEE_MASK;
        view_.voteCount = (body >> _VOTE_COUNT_SHIFT) & 0xff;
        view_.callbackGasLimit = uint32(body >> _CALLBACK_SHIFT);
    }

    /// @inheritdoc IVerificationRegistry
    function hasVoted(uint256 jobId, uint256 licenseId) external view returns (bool) {
        Job storage job = _jobs[jobId];
        if (job.status == JobStatus.Finalized) revert VerificationRegistry_JobNotOpen(jobId, JobStatus.Finalized);
        VoteBook memory book = _loadVotes(jobId, job.body, 0);
        return _indexOfLicense(book, licenseId) != type(uint256).max;
    }

    /// @inheritdoc IVerificationRegistry
    function getResult(uint256 jobId) public view returns (Result memory result) {
        Job storage job = _jobs[jobId];
        result.status = job.status;
        if (result.status != JobStatus.Finalized) return result;
        uint256 body = job.body;
        uint256 balance = body >> _BALANCE_SHIFT;
        result.balance = balance == _LARGE_BALANCE ? _largeBalances[jobId] : balance;
        result.queryResultHash = job.commitment;
        result.sourceBlock = uint64(body);
        result.finalizedAt = job.time;
    }

    /// @inheritdoc IVerificationRegistry
    function latestBalance(
        uint8 chain,
        bytes32 owner,
        bytes32 asset
    ) external view returns (uint256 balance, uint64 sourceBlock, uint64 finalizedAt, uint256 jobId) {
        bytes32 subject = _subject(chain, owner, asset);
        jobId = _latestJobs[subject];
        if (jobId != 0) {
            Result memory result = getResult(jobId);
            (balance, sourceBlock, finalizedAt) = (result.balance, result.sourceBlock, result.finalizedAt);
        }
        uint256 attested = _attestedResults[subject];
        if (attested != 0 && (jobId == 0 || uint64(attested) > finalizedAt)) {
            balance = attested >> _ATTESTED_BALANCE_SHIFT;
            if (balance == _LARGE_ATTESTED_BALANCE) balance = _largeAttestedBalances[subject];
            return (balance, uint64(attested >> 64), uint64(attested), 0);
        }
        if (jobId == 0) revert VerificationRegistry_NoResult(chain, owner, asset);
    }

    /// @inheritdoc IVerificationRegistry
    function voteStatsOf(uint256 licenseId) external view returns (VoteStats memory) {
        LicenseAccount storage account = _licenseAccounts[licenseId];
        return VoteStats({ agreed: account.agreed, disagreed: account.disagreed });
    }

    /// @inheritdoc IVerificationRegistry
    function claimableFees(uint256 licenseId) external view returns (uint256) {
        return _licenseAccounts[licenseId].fees;
    }

    /// @inheritdoc IVerificationRegistry
    function epochRewardInfo(
        uint256 epoch,
        uint256 licenseId
    ) external view returns (uint256 pool, uint256 totalVotes, uint256 licenseVotes) {
        LicenseAccount storage account = _licenseAccounts[licenseId];
        licenseVotes = account.epoch == epoch ? account.epochVotes : _epochVotes[epoch][licenseId];
        return (_epochPools[epoch], _epochTotalVotes[epoch], licenseVotes);
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
        _consumers[consumer].available += amount.toUint112();
        emit CollateralDeposited(consumer, msg.sender, amount, staked);
    }

    function _request(uint8 chain, bytes32 owner, bytes32 asset) private returns (uint256 jobId) {
        if (owner == bytes32(0) || asset == bytes32(0)) revert VerificationRegistry_ZeroAddress();
        Config memory config = _config;
        uint256 fee = config.requestFee;
        Consumer memory consumer = _consumers[msg.sender];
        if (consumer.available < fee) revert VerificationRegistry_InsufficientCollateral(msg.sender, consumer.available, fee);
        consumer.available -= uint112(fee);
        consumer.reserved += uint112(fee);
        _consumers[msg.sender] = consumer;

        jobId = config.nextJobId;
        _config.nextJobId = uint64(jobId + 1);
        _jobs[jobId] = Job({
            requester: msg.sender,
            time: uint64(block.timestamp + config.jobTimeout),
            status: JobStatus.Open,
            chain: chain,
            // The node registry holds the network's quorum; a job keeps the one of its request.
            quorum: uint8(NODE_REGISTRY.quorum()),
            body: fee | (uint256(consumer.callbackGasLimit) << _CALLBACK_SHIFT),
            commitment: bytes32(_subjectDigest(_subject(chain, owner, asset)))
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
        // What other parties can cause (another node finalizing first, time running out, the job filling
        // up, a license changing hands or voting through another operator) skips this submission, never
        // the whole batch.
        if (status != JobStatus.Open) {
            return _ignore(jobId, status == JobStatus.Finalized ? IgnoreReason.JobFinalized : IgnoreReason.JobExpired);
        }
        if (block.timestamp > job.time) return _ignore(jobId, IgnoreReason.DeadlinePassed);
        // Every vote, not only the first, must be about what the job asks: an answer about another owner or
        // asset could otherwise reach quorum and be stored (and called back) as this job's result.
        bytes32 subject = _subject(job.chain, submission.owner, submission.asset);
        uint256 commitment = uint256(job.commitment);
        if (commitment & ~_LOW_HALF != _subjectDigest(subject)) revert VerificationRegistry_WrongSubject(jobId);
        uint256 body = job.body;
        VoteBook memory book = _loadVotes(jobId, body, newVotes);
        if (book.voteCount + newVotes > MAX_VOTES_PER_JOB) return _ignore(jobId, IgnoreReason.VoteLimitReached);
        if (_checkNewLicenses(book, submission)) return _ignore(jobId, IgnoreReason.AlreadyVoted);
        // Counts the submissions only if the caller is the live operator of every license.
        if (!NODE_REGISTRY.recordSubmissions(msg.sender, submission.licenseIds)) {
            return _ignore(jobId, IgnoreReason.LicenseNotLive);
        }
        _recordVotes(job, book, body, subject, commitment, submission);
    }

    /// @dev Adds the submission's votes to the job and finalizes it when its answer reached the quorum.
    function _recordVotes(
        Job storage job,
        VoteBook memory book,
        uint256 body,
        bytes32 subject,
        uint256 commitment,
        Submission calldata submission
    ) private {
        uint256 jobId = submission.jobId;
        bytes32 resultHash = keccak256(abi.encode(subject, submission.balance, submission.queryResultHash));
        uint256 candidate = _candidateIndex(jobId, book, commitment, resultHash);
        bool newCandidate = candidate == book.candidateCount;
        if (newCandidate) ++book.candidateCount;
        uint256 firstNewVote = book.voteCount;
        _appendVotes(book, submission, candidate, resultHash);

        if (_countVotesFor(book, candidate) >= job.quorum) {
            // An open job's later answers are cleared (a refund, not a cost); a new winner was never stored.
            _clearCandidates(jobId, newCandidate ? candidate : book.candidateCount);
            _finalize(job, book, candidate, body, subject, submission);
        } else {
            // A new answer is stored only when the job stays open: a finalizing one is never read again.
            if (newCandidate && candidate == 0) job.commitment = bytes32(commitment | (uint256(resultHash) & _LOW_HALF));
            else if (newCandidate) _candidates[jobId][candidate] = resultHash;
            _storeVotes(jobId, job, book, body, firstNewVote);
        }
    }

    function _ignore(uint256 jobId, IgnoreReason reason) private {
        emit SubmissionIgnored(jobId, msg.sender, reason);
    }

    /// @dev Reverts when the submission names a license twice; returns whether one of its licenses has
    /// already voted on the job (in an earlier transaction, possibly through another operator).
    function _checkNewLicenses(VoteBook memory book, Submission calldata submission) private pure returns (bool voted) {
        uint256[] calldata licenseIds = submission.licenseIds;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            for (uint256 j = 0; j < i; ++j) {
                if (licenseIds[j] == licenseId) revert VerificationRegistry_DuplicateLicense(submission.jobId, licenseId);
            }
            if (_indexOfLicense(book, licenseId) != type(uint256).max) voted = true;
        }
    }

    /// @dev Adds one vote per license of `submission` for `candidate`.
    function _appendVotes(
        VoteBook memory book,
        Submission calldata submission,
        uint256 candidate,
        bytes32 resultHash
    ) private {
        for (uint256 i = 0; i < submission.licenseIds.length; ++i) {
            uint256 licenseId = submission.licenseIds[i];
            book.votes[book.voteCount++] = (uint256(licenseId.toUint48()) << 8) | candidate;
            emit VoteSubmitted(submission.jobId, licenseId, msg.sender, resultHash, submission.sourceBlock);
        }
    }

    /// @dev The index of `resultHash` among the job's distinct answers, or `book.candidateCount` when it is
    /// new (there are never more answers than votes, so an index fits the vote's 8 bits).
    function _candidateIndex(
        uint256 jobId,
        VoteBook memory book,
        uint256 commitment,
        bytes32 resultHash
    ) private view returns (uint256 index) {
        if (book.candidateCount == 0) return 0;
        if (commitment & _LOW_HALF == uint256(resultHash) & _LOW_HALF) return 0;
        for (index = 1; index < book.candidateCount; ++index) {
            if (_candidates[jobId][index] == resultHash) return index;
        }
    }

    /// @dev Clears the stored answers after the first (which lives in the job's `commitment`).
    function _clearCandidates(uint256 jobId, uint256 storedCount) private {
        for (uint256 i = 1; i < storedCount; ++i) {
            delete _candidates[jobId][i];
        }
    }

    /// @dev Unpacks a job's votes into memory, with room for `extra` more.
    function _loadVotes(uint256 jobId, uint256 body, uint256 extra) private view returns (VoteBook memory book) {
        book.voteCount = (body >> _VOTE_COUNT_SHIFT) & 0xff;
        book.candidateCount = (body >> _CANDIDATE_COUNT_SHIFT) & 0xff;
        book.votes = new uint256[](book.voteCount + extra);
        for (uint256 i = 0; i < book.voteCount; ++i) {
            if (i < _BODY_VOTES) {
                book.votes[i] = (body >> (_BODY_VOTES_SHIFT + i * _VOTE_BITS)) & _VOTE_MASK;
            } else {
                uint256 position = i - _BODY_VOTES;
                uint256 word = _overflowVotes[jobId][position / _VOTES_PER_WORD];
                book.votes[i] = (word >> ((position % _VOTES_PER_WORD) * _VOTE_BITS)) & _VOTE_MASK;
            }
        }
    }

    /// @dev Packs the votes back: the body always (counts change), overflow words from `firstNew` on.
    function _storeVotes(uint256 jobId, Job storage job, VoteBook memory book, uint256 body, uint256 firstNew) private {
        uint256 newBody = body & ((1 << _VOTE_COUNT_SHIFT) - 1);
        newBody |= book.voteCount << _VOTE_COUNT_SHIFT | book.candidateCount << _CANDIDATE_COUNT_SHIFT;
        for (uint256 i = 0; i < _BODY_VOTES && i < book.voteCount; ++i) {
            newBody |= book.votes[i] << (_BODY_VOTES_SHIFT + i * _VOTE_BITS);
        }
        job.body = newBody;
        if (book.voteCount <= _BODY_VOTES) return;
        uint256 firstWord = firstNew <= _BODY_VOTES ? 0 : (firstNew - _BODY_VOTES) / _VOTES_PER_WORD;
        uint256 lastWord = (book.voteCount - _BODY_VOTES - 1) / _VOTES_PER_WORD;
        for (uint256 w = firstWord; w <= lastWord; ++w) {
            uint256 word;
            for (uint256 slot = 0; slot < _VOTES_PER_WORD; ++slot) {
                uint256 i = _BODY_VOTES + w * _VOTES_PER_WORD + slot;
                if (i < book.voteCount) word |= book.votes[i] << (slot * _VOTE_BITS);
            }
            _overflowVotes[jobId][w] = word;
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

    /// @dev Writes the result over what only an open job needed, credits the fee to the agreeing licenses
    /// (its staked tokens stay here until they claim) and calls the consumer back.
    function _finalize(
        Job storage job,
        VoteBook memory book,
        uint256 winner,
        uint256 body,
        bytes32 subject,
        Submission calldata submission
    ) private {
        uint256 jobId = submission.jobId;
        uint256 fee = body & _FEE_MASK;
        uint256 callbackGasLimit = uint32(body >> _CALLBACK_SHIFT);
        address requester = job.requester;

        job.status = JobStatus.Finalized;
        job.time = uint64(block.timestamp);
        job.commitment = submission.queryResultHash;
        uint256 balance = submission.balance;
        if (balance >= _LARGE_BALANCE) {
            _largeBalances[jobId] = balance;
            balance = _LARGE_BALANCE;
        }
        job.body = (balance << _BALANCE_SHIFT) | submission.sourceBlock;

        // A job requested earlier (so read earlier) and finalizing late never replaces a newer one. Job ids
        // order the reads; the reported source block does not, since the finalizing node alone picks it.
        if (_latestJobs[subject] < jobId) _latestJobs[subject] = jobId;

        _consumers[requester].reserved -= uint112(fee);
        _settleVotes(book, winner, fee);

        emit VerificationFulfilled(
            jobId,
            job.chain,
            submission.owner,
            submission.asset,
            submission.balance,
            submission.queryResultHash,
            submission.sourceBlock
        );
        _callBack(jobId, requester, callbackGasLimit, job.chain, submission);
    }

    /// @dev Splits the fee among the agreeing licenses (the first one takes the rounding remainder), counts
    /// their epoch reward votes, and counts every voter's outcome.
    function _settleVotes(VoteBook memory book, uint256 winner, uint256 fee) private {
        uint256 agreedCount = _countVotesFor(book, winner);
        uint256 share = fee / agreedCount;
        uint256 remainder = fee - share * agreedCount;
        uint256 epoch = currentEpoch();
        for (uint256 i = 0; i < book.voteCount; ++i) {
            uint256 licenseId = book.votes[i] >> 8;
            if (book.votes[i] & 0xff != winner) {
                ++_licenseAccounts[licenseId].disagreed;
                continue;
            }
            _credit(licenseId, share + remainder, epoch);
            remainder = 0;
        }
        _epochTotalVotes[epoch] += agreedCount;
    }

    /// @dev Adds `amount` to the license's fee credit, one agreeing vote in `epoch` and one agreed outcome,
    /// first moving the votes of an earlier epoch out of its account.
    function _credit(uint256 licenseId, uint256 amount, uint256 epoch) private {
        LicenseAccount memory account = _licenseAccounts[licenseId];
        if (account.epoch != epoch) {
            if (account.epochVotes != 0) _epochVotes[account.epoch][licenseId] = account.epochVotes;
            account.epoch = epoch.toUint32();
            account.epochVotes = 0;
        }
        account.fees += uint96(amount);
        ++account.epochVotes;
        ++account.agreed;
        _licenseAccounts[licenseId] = account;
    }

    /// @dev Takes (and clears) a license's unclaimed agreeing votes of an ended epoch.
    function _takeEpochVotes(uint256 epoch, uint256 licenseId) private returns (uint256 votes) {
        LicenseAccount storage account = _licenseAccounts[licenseId];
        if (account.epoch == epoch) {
            votes = account.epochVotes;
            account.epochVotes = 0;
        } else {
            votes = _epochVotes[epoch][licenseId];
            delete _epochVotes[epoch][licenseId];
        }
    }

    /// @dev Calls the consumer with exactly its gas limit and without copying return data (a hostile
    /// consumer can neither revert finalization nor bloat it); a failure only emits `CallbackFailed`.
    function _callBack(
        uint256 jobId,
        address consumer,
        uint256 gasLimit,
        uint8 chain,
        Submission calldata submission
    ) private {
        if (gasLimit == 0 || consumer.code.length == 0) return;
        // EIP-150 forwards at most 63/64 of the gas left; make sure that is at least the limit.
        if (gasleft() < gasLimit + gasLimit / 63 + _CALLBACK_GAS_BUFFER) {
            revert VerificationRegistry_InsufficientGasForCallback(jobId, gasLimit);
        }
        bytes memory data = abi.encodeCall(
            IVerificationConsumer.onVerificationFulfilled,
            (jobId, chain, submission.owner, submission.asset, submission.balance, submission.sourceBlock)
        );
        bool success;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            success := call(gasLimit, consumer, 0, add(data, 0x20), mload(data), 0, 0)
        }
        if (!success) emit CallbackFailed(jobId, consumer);
    }

    /*//////////////////////////////////////////////////////////////
                        PRIVATE: ATTESTATIONS
    //////////////////////////////////////////////////////////////*/

    /// @dev Moves the request fee from `payer`'s free collateral to the signing licenses' fee credits (its
    /// staked tokens stay here until they claim, as for a finalized job's voters). Signatures earn no epoch
    /// reward points: the pools reward the job path's votes, and most attestations are only checked in
    /// views, never recorded, so points for the recorded few would pay whichever signers someone recorded.
    function _payAttestationFee(address payer, uint256[] calldata licenseIds) private returns (uint256 fee) {
        fee = _config.requestFee;
        Consumer storage consumer = _consumers[payer];
        uint256 available = consumer.available;
        if (available < fee) revert VerificationRegistry_InsufficientCollateral(payer, available, fee);
        consumer.available = uint112(available - fee);
        uint256 share = fee / licenseIds.length;
        uint256 remainder = fee - share * licenseIds.length;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            // Only the fee field: 96 bits hold every staked token there can be (see the constructor).
            _licenseAccounts[licenseIds[i]].fees += uint96(share + remainder);
            remainder = 0;
        }
    }

    function _emitAttestationRecorded(address payer, AttestedResult calldata result, uint256 fee) private {
        emit AttestationRecorded(
            payer,
            result.chain,
            result.owner,
            result.asset,
            result.balance,
            result.queryResultHash,
            result.sourceBlock,
            result.issuedAt,
            fee
        );
    }

    /*//////////////////////////////////////////////////////////////
                          PRIVATE: HELPERS
    //////////////////////////////////////////////////////////////*/

    /// @dev Stakes `amount` of the primary tokens held here for `account` (fees and rewards are paid so).
    function _stakeFor(address account, uint256 amount) private {
        PRIMARY_TOKEN.forceApprove(address(STAKED_TOKEN), amount);
        STAKED_TOKEN.stakeFor(account, amount);
    }

    function _checkLicenseOwner(uint256 licenseId) private view {
        if (_LICENSE.ownerOf(licenseId) != msg.sender) {
            revert VerificationRegistry_NotLicenseOwner(licenseId, msg.sender);
        }
    }

    function _subject(uint8 chain, bytes32 owner, bytes32 asset) private pure returns (bytes32) {
        return keccak256(abi.encode(chain, owner, asset));
    }

    /// @dev The high half of a subject, as an open job's `commitment` holds it.
    function _subjectDigest(bytes32 subject) private pure returns (uint256) {
        return uint256(subject) & ~_LOW_HALF;
    }

    function _setRequestFee(uint256 fee) private {
        if (fee > type(uint96).max) revert VerificationRegistry_InvalidFee(fee);
        uint256 oldFee = _config.requestFee;
        _config.requestFee = uint96(fee);
        emit RequestFeeUpdated(oldFee, fee);
    }

    function _setJobTimeout(uint256 timeout) private {
        if (timeout < MIN_JOB_TIMEOUT || timeout > MAX_JOB_TIMEOUT) revert VerificationRegistry_InvalidJobTimeout(timeout);
        uint256 oldTimeout = _config.jobTimeout;
        _config.jobTimeout = uint32(timeout);
        emit JobTimeoutUpdated(oldTimeout, timeout);
    }
}
