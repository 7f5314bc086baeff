// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AccessControlDefaultAdminRules } from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { SafeERC20 } from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import { ReentrancyGuardTransient } from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";

import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";
import { INodeLicense } from "@avn/contracts/interfaces/INodeLicense.sol";
import { INodeRegistry } from "@avn/contracts/interfaces/INodeRegistry.sol";
import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";
import { IVerificationConsumer, IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";
import {
    FinalizedJobBody,
    JobBody,
    LicenseAccount,
    OpenJobBody,
    RecordedAttestation,
    VotePacking
} from "./libraries/VotePacking.sol";

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
/// Per license, the fee credit and the agreed and disagreed counts share one slot. That slot is opened once (`openLicenseAccounts`, by the license's owner or node before it earns)
/// and carries a marker no claim clears, so crediting a fee always rewrites a written slot: the network's
/// first recording costs what every later one does, and no integrator pays for a license's first write.
/// The bit layouts of these words are `VotePacking`'s, where each word is a type of its own (`OpenJobBody`
/// and `FinalizedJobBody` for the body's two lives, `RecordedAttestation`, `LicenseAccount`) read only through
/// its own functions, so a finalized body read as an open one does not compile. This contract keeps the rules:
/// collateral, jobs and votes, results, and the fee split. Epoch rewards are `RewardPools`'s: split by quality
/// of service, which follows from this registry's events, they cost the job path nothing.
contract VerificationRegistry is AccessControlDefaultAdminRules, ReentrancyGuardTransient, IVerificationRegistry {
    using SafeCast for uint256;
    using SafeERC20 for IERC20;
    using SafeERC20 for IStakedToken;
    using VotePacking for VotePacking.VoteBook;

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
        // slot 1 (see the contract's notes): an `OpenJobBody` or a `FinalizedJobBody`, as `status` says
        JobBody body;
        // slot 2
        bytes32 commitment;
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

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    uint8 internal constant _CHAIN_ETHEREUM = 0;
    uint8 internal constant _CHAIN_SOLANA = 1;

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
    uint256 public totalFeesBurned;

    Config internal _config;

    mapping(uint256 jobId => Job job) internal _jobs;

    mapping(uint256 jobId => mapping(uint256 word => uint256 packedVotes)) internal _overflowVotes;

    /// @dev A job's distinct answers after the first (whose digest is in its `commitment`).
    mapping(uint256 jobId => mapping(uint256 index => bytes32 resultHash)) internal _candidates;

    /// @dev A finalized job's balance of `VotePacking.LARGE_BALANCE` or more (its body holds the marker).
    mapping(uint256 jobId => uint256 balance) internal _largeBalances;

    mapping(bytes32 subject => uint256 jobId) internal _latestJobs;

    /// @dev The latest recorded attestation per subject, one packed slot (`VotePacking.packAttested`).
    mapping(bytes32 subject => RecordedAttestation packed) internal _attestedResults;

    /// @dev A recorded balance of `VotePacking.LARGE_ATTESTED_BALANCE` or more (its slot holds the marker).
    mapping(bytes32 subject => uint256 balance) internal _largeAttestedBalances;

    mapping(address consumer => Consumer record) internal _consumers;

    mapping(uint256 licenseId => LicenseAccount account) internal _licenseAccounts;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param stakedToken The staked token (this contract needs its PROTOCOL_ROLE).
    /// @param nodeRegistry The node registry (this contract needs its RECORDER_ROLE).
    /// @param epochDuration The length of an epoch (quality of service and rewards), in seconds.
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
        EPOCH_DURATION = epochDuration;
        EPOCHS_START = block.timestamp;
        STAKED_TOKEN = stakedToken;
        PRIMARY_TOKEN = stakedToken.PRIMARY_TOKEN();
        // Collateral (112 bits) and a license's fee credit (96 bits) are sums of staked tokens, so they fit as
        // long as every token that could ever be staked does. The primary supply is fixed at 10^27 (about
        // 2^90) on L1, and the L2 token holds at most what the bridge locked there; this check refuses a
        // token that could not be ours.
        if (PRIMARY_TOKEN.totalSupply() > type(uint96).max) revert VerificationRegistry_SupplyTooLarge();
        NODE_REGISTRY = nodeRegistry;
        _LICENSE = nodeRegistry.LICENSE();
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
        uint256 fee = OpenJobBody.wrap(JobBody.unwrap(job.body)).feeOf();
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
        IAttestationVerifier.BalanceAttestation calldata result,
        uint256[] calldata licenseIds
    ) external onlyRole(ATTESTATION_ROLE) nonReentrant {
        bytes32 subject = _subject(result.chain, result.owner, result.asset);
        RecordedAttestation stored = _attestedResults[subject];
        uint64 storedIssuedAt = stored.attestedIssuedAtOf();
        if (stored.isRecorded() && result.issuedAt <= storedIssuedAt) {
            revert VerificationRegistry_AttestationNotNewer(result.issuedAt, storedIssuedAt);
        }
        uint256 fee = _payAttestationFee(payer, licenseIds);
        uint256 balance = result.balance;
        if (balance >= VotePacking.LARGE_ATTESTED_BALANCE) {
            _largeAttestedBalances[subject] = balance;
            balance = VotePacking.LARGE_ATTESTED_BALANCE;
        }
        _attestedResults[subject] = VotePacking.packAttested(balance, result.sourceBlock, result.issuedAt);
        _emitAttestationRecorded(payer, result, fee, licenseIds);
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
    /// @dev Nothing stored, nothing checked: what a commitment is worth is decided from the events, by the
    /// settlement of the epoch's rewards, which only pays a revealed vote whose commitment came first.
    function commitResults(bytes32 commitment) external {
        emit ResultsCommitted(msg.sender, commitment);
    }

    /// @inheritdoc IVerificationRegistry
    function revealResults(bytes32 salt, Submission[] calldata submissions) external nonReentrant {
        // After the selector and the salt, the calldata is the submissions' encoding (its offset included).
        emit ResultsRevealed(msg.sender, revealCommitment(msg.sender, salt, msg.data[36:]));
        for (uint256 i = 0; i < submissions.length; ++i) {
            _submit(submissions[i]);
        }
    }

    /// @inheritdoc IVerificationRegistry
    function revealCommitment(address operator, bytes32 salt, bytes calldata tail) public pure returns (bytes32) {
        return keccak256(abi.encode(operator, salt, keccak256(tail)));
    }

    /// @inheritdoc IVerificationRegistry
    function claimFees(uint256[] calldata licenseIds) external nonReentrant {
        uint256 total;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            _checkLicenseOwner(licenseId);
            LicenseAccount account = _licenseAccounts[licenseId];
            uint256 amount = account.feesOf();
            if (amount == 0) continue;
            // The account stays open (non-zero): the next fee rewrites the slot instead of writing it first.
            _licenseAccounts[licenseId] = account.withoutFees();
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
    /// @dev One read of the license contract for the whole list (licenses are numbered 1 to `totalMinted`,
    /// and none is burned), then per license one read and, for an account not open yet, one write. The loop
    /// is over the caller's own list, which it pays for; the accounts it can write are bounded by the license
    /// supply. No guard: it moves no token, and the one call out is a view of the protocol's license contract.
    function openLicenseAccounts(uint256[] calldata licenseIds) external {
        uint256 minted = _LICENSE.totalMinted();
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            if (licenseId == 0 || licenseId > minted) revert VerificationRegistry_UnknownLicense(licenseId);
            LicenseAccount account = _licenseAccounts[licenseId];
            if (account.isOpen()) continue;
            _licenseAccounts[licenseId] = account.opened();
            emit LicenseAccountOpened(licenseId, msg.sender);
        }
    }

    /*//////////////////////////////////////////////////////////////
                    EXTERNAL FUNCTIONS: GOVERNANCE
    //////////////////////////////////////////////////////////////*/

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
        OpenJobBody body = OpenJobBody.wrap(JobBody.unwrap(job.body));
        view_.deadline = job.time;
        view_.fee = body.feeOf();
        view_.voteCount = body.voteCountOf();
        view_.callbackGasLimit = uint32(body.callbackGasLimitOf());
    }

    /// @inheritdoc IVerificationRegistry
    function hasVoted(uint256 jobId, uint256 licenseId) external view returns (bool) {
        Job storage job = _jobs[jobId];
        if (job.status == JobStatus.Finalized) revert VerificationRegistry_JobNotOpen(jobId, JobStatus.Finalized);
        OpenJobBody body = OpenJobBody.wrap(JobBody.unwrap(job.body));
        VotePacking.VoteBook memory book = VotePacking.loadVotes(_overflowVotes, jobId, body, 0);
        return book.indexOf(licenseId) != VotePacking.NOT_FOUND;
    }

    /// @inheritdoc IVerificationRegistry
    function getResult(uint256 jobId) public view returns (Result memory result) {
        Job storage job = _jobs[jobId];
        result.status = job.status;
        if (result.status != JobStatus.Finalized) return result;
        FinalizedJobBody body = FinalizedJobBody.wrap(JobBody.unwrap(job.body));
        uint256 balance = body.balanceOf();
        result.balance = balance == VotePacking.LARGE_BALANCE ? _largeBalances[jobId] : balance;
        result.queryResultHash = job.commitment;
        result.sourceBlock = body.sourceBlockOf();
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
        RecordedAttestation attested = _attestedResults[subject];
        if (attested.isRecorded() && (jobId == 0 || attested.attestedIssuedAtOf() > finalizedAt)) {
            balance = attested.attestedBalanceOf();
            if (balance == VotePacking.LARGE_ATTESTED_BALANCE) balance = _largeAttestedBalances[subject];
            return (balance, attested.attestedSourceBlockOf(), attested.attestedIssuedAtOf(), 0);
        }
        if (jobId == 0) revert VerificationRegistry_NoResult(chain, owner, asset);
    }

    /// @inheritdoc IVerificationRegistry
    function voteStatsOf(uint256 licenseId) external view returns (VoteStats memory) {
        LicenseAccount account = _licenseAccounts[licenseId];
        return VoteStats({ agreed: account.agreedOf(), disagreed: account.disagreedOf() });
    }

    /// @inheritdoc IVerificationRegistry
    function claimableFees(uint256 licenseId) external view returns (uint256) {
        return _licenseAccounts[licenseId].feesOf();
    }

    /// @inheritdoc IVerificationRegistry
    function isLicenseAccountOpen(uint256 licenseId) external view returns (bool) {
        return _licenseAccounts[licenseId].isOpen();
    }

    /// @inheritdoc IVerificationRegistry
    function currentEpoch() external view returns (uint256) {
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
            body: JobBody.wrap(OpenJobBody.unwrap(VotePacking.openBody(fee, consumer.callbackGasLimit))),
            commitment: bytes32(VotePacking.subjectDigest(_subject(chain, owner, asset)))
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
        if (VotePacking.subjectHalfOf(commitment) != VotePacking.subjectDigest(subject)) {
            revert VerificationRegistry_WrongSubject(jobId);
        }
        OpenJobBody body = OpenJobBody.wrap(JobBody.unwrap(job.body));
        VotePacking.VoteBook memory book = VotePacking.loadVotes(_overflowVotes, jobId, body, newVotes);
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
        VotePacking.VoteBook memory book,
        OpenJobBody body,
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

        if (book.countFor(candidate) >= job.quorum) {
            // An open job's later answers are cleared (a refund, not a cost); a new winner was never stored.
            _clearCandidates(jobId, newCandidate ? candidate : book.candidateCount);
            _finalize(job, book, candidate, body, subject, submission);
        } else {
            // A new answer is stored only when the job stays open: a finalizing one is never read again.
            if (newCandidate && candidate == 0) job.commitment = bytes32(VotePacking.withFirstAnswer(commitment, resultHash));
            else if (newCandidate) _candidates[jobId][candidate] = resultHash;
            job.body = JobBody.wrap(OpenJobBody.unwrap(VotePacking.storeVotes(_overflowVotes, jobId, book, body, firstNewVote)));
        }
    }

    function _ignore(uint256 jobId, IgnoreReason reason) private {
        emit SubmissionIgnored(jobId, msg.sender, reason);
    }

    /// @dev Reverts when the submission names a license twice; returns whether one of its licenses has
    /// already voted on the job (in an earlier transaction, possibly through another operator).
    function _checkNewLicenses(VotePacking.VoteBook memory book, Submission calldata submission) private pure returns (bool voted) {
        uint256[] calldata licenseIds = submission.licenseIds;
        for (uint256 i = 0; i < licenseIds.length; ++i) {
            uint256 licenseId = licenseIds[i];
            for (uint256 j = 0; j < i; ++j) {
                if (licenseIds[j] == licenseId) revert VerificationRegistry_DuplicateLicense(submission.jobId, licenseId);
            }
            if (book.indexOf(licenseId) != VotePacking.NOT_FOUND) voted = true;
        }
    }

    /// @dev Adds one vote per license of `submission` for `candidate`.
    function _appendVotes(
        VotePacking.VoteBook memory book,
        Submission calldata submission,
        uint256 candidate,
        bytes32 resultHash
    ) private {
        for (uint256 i = 0; i < submission.licenseIds.length; ++i) {
            uint256 licenseId = submission.licenseIds[i];
            book.appendVote(licenseId, candidate);
            emit VoteSubmitted(submission.jobId, licenseId, msg.sender, resultHash, submission.sourceBlock);
        }
    }

    /// @dev The index of `resultHash` among the job's distinct answers, or `book.candidateCount` when it is
    /// new (there are never more answers than votes, so an index fits the vote's 8 bits).
    function _candidateIndex(
        uint256 jobId,
        VotePacking.VoteBook memory book,
        uint256 commitment,
        bytes32 resultHash
    ) private view returns (uint256 index) {
        if (book.candidateCount == 0) return 0;
        if (VotePacking.isFirstAnswer(commitment, resultHash)) return 0;
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

    /*//////////////////////////////////////////////////////////////
                        PRIVATE: FINALIZATION
    //////////////////////////////////////////////////////////////*/

    /// @dev Writes the result over what only an open job needed, credits the fee to the agreeing licenses
    /// (its staked tokens stay here until they claim) and calls the consumer back.
    function _finalize(
        Job storage job,
        VotePacking.VoteBook memory book,
        uint256 winner,
        OpenJobBody body,
        bytes32 subject,
        Submission calldata submission
    ) private {
        uint256 jobId = submission.jobId;
        uint256 fee = body.feeOf();
        uint256 callbackGasLimit = body.callbackGasLimitOf();
        address requester = job.requester;

        job.status = JobStatus.Finalized;
        job.time = uint64(block.timestamp);
        job.commitment = submission.queryResultHash;
        uint256 balance = submission.balance;
        if (balance >= VotePacking.LARGE_BALANCE) {
            _largeBalances[jobId] = balance;
            balance = VotePacking.LARGE_BALANCE;
        }
        job.body = JobBody.wrap(FinalizedJobBody.unwrap(VotePacking.resultBody(balance, submission.sourceBlock)));

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

    /// @dev Splits the fee among the agreeing licenses (the first one takes the rounding remainder) and counts
    /// every voter's outcome: one write per license's account.
    function _settleVotes(VotePacking.VoteBook memory book, uint256 winner, uint256 fee) private {
        uint256 agreedCount = book.countFor(winner);
        uint256 share = fee / agreedCount;
        uint256 remainder = fee - share * agreedCount;
        for (uint256 i = 0; i < book.voteCount; ++i) {
            // One read of the vote for both fields: reading `book.votes[i]` once per field cost ~140 gas a
            // vote more, as measured by the gas snapshot.
            uint256 vote = book.votes[i];
            uint256 licenseId = VotePacking.licenseOf(vote);
            if (VotePacking.candidateOf(vote) != winner) {
                _licenseAccounts[licenseId] = _licenseAccounts[licenseId].addDisagreement();
                continue;
            }
            _licenseAccounts[licenseId] = _licenseAccounts[licenseId].creditAgreeingVote(share + remainder);
            remainder = 0;
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
    /// staked tokens stay here until they claim, as for a finalized job's voters). Signatures earn no share of
    /// the epoch rewards: those pay the job path's votes, and most attestations are only checked in views,
    /// never recorded, so a share for the recorded few would pay whichever signers someone recorded (a payer
    /// recording its own licenses' signatures gets the fee back). The quality-of-service figures count the
    /// recorded signatures per license from `AttestationRecorded`, which names the licenses: no storage.
    /// Each signing license's account is rewritten (5,000 gas, cold) when it is open, as its owner's set-up
    /// or its node's start leaves it; a license never opened pays its slot's first write here, once (its first
    /// fee opens it).
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
            uint256 licenseId = licenseIds[i];
            _licenseAccounts[licenseId] = _licenseAccounts[licenseId].addFees(uint96(share + remainder));
            remainder = 0;
        }
    }

    /// @dev `AttestationRecorded`, its data copied from the calldata as the event lays it out: the result's
    /// seven words, the fee, then the license ids. The ABI encoder would load, clean and check each field again;
    /// the narrow ones (`chain`, `sourceBlock`, `issuedAt`) were read, hence checked, before this, the others
    /// are whole words, and `payer` was checked on entry. It cost a recording 743 gas more (`bench:gas`): the
    /// attested path's bar for a new subject is 110,000 (docs/attestations.md).
    function _emitAttestationRecorded(
        address payer,
        IAttestationVerifier.BalanceAttestation calldata result,
        uint256 fee,
        uint256[] calldata licenseIds
    ) private {
        bytes32 topic = AttestationRecorded.selector;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let data := mload(0x40)
            calldatacopy(data, result, 0xe0)
            mstore(add(data, 0xe0), fee)
            // The array's offset from the data's start, its length, its elements.
            mstore(add(data, 0x100), 0x120)
            mstore(add(data, 0x120), licenseIds.length)
            let idsSize := shl(5, licenseIds.length)
            calldatacopy(add(data, 0x140), licenseIds.offset, idsSize)
            log2(data, add(0x140, idsSize), topic, payer)
        }
    }

    /*//////////////////////////////////////////////////////////////
                          PRIVATE: HELPERS
    //////////////////////////////////////////////////////////////*/

    /// @dev Stakes `amount` of the primary tokens held here for `account` (fees are paid so).
    function _stakeFor(address account, uint256 amount) private {
        PRIMARY_TOKEN.forceApprove(address(STAKED_TOKEN), amount);
        STAKED_TOKEN.stakeFor(account, amount);
    }

    /// @dev Fees travel with the license: whoever owns it at claim time is paid.
    function _checkLicenseOwner(uint256 licenseId) private view {
        if (_LICENSE.ownerOf(licenseId) != msg.sender) {
            revert VerificationRegistry_NotLicenseOwner(licenseId, msg.sender);
        }
    }

    function _subject(uint8 chain, bytes32 owner, bytes32 asset) private pure returns (bytes32 subject) {
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            let free := mload(0x40)
            mstore(0x00, chain)
            mstore(0x20, owner)
            mstore(0x40, asset)
            subject := keccak256(0x00, 0x60)
            mstore(0x40, free)
        }
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
