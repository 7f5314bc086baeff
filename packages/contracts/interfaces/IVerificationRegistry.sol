// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

import { IAttestationVerifier } from "./IAttestationVerifier.sol";
import { INodeRegistry } from "./INodeRegistry.sol";
import { IStakedToken } from "./IStakedToken.sol";

/// @title IVerificationRegistry
/// @notice On-chain balance verification. A consumer keeps staked tokens here as collateral and opens a
/// job ("how many units of asset A does owner O hold on chain C?"); the job's fee is reserved from its
/// collateral. Circuit nodes submit, for their live licenses, the balance and the keccak-256 of the raw
/// query result (the API's QueryResult bytes, which stay off-chain); when a quorum of distinct licenses
/// agree on the same (owner, asset, balance, query result hash), the job finalizes: the balance and the
/// hash are stored and readable here, the consumer may be called back, and the fee is paid in staked
/// tokens: the consumer's staked fee is credited to the agreeing licenses and, when their owner claims,
/// burned, with its backing primary tokens staked again for the owner. A job nobody finalizes in time
/// expires and its fee returns to the consumer's collateral. The registry's epochs are the ones the network's
/// quality of service is measured in and its rewards are paid for (`IRewardPools`).
/// @dev Chains: 0 = Ethereum, 1 = Solana. EVM addresses are left-padded into bytes32. A job's subject is
/// keccak256(abi.encode(chain, owner, asset)).
interface IVerificationRegistry {
    /*//////////////////////////////////////////////////////////////
                                 TYPES
    //////////////////////////////////////////////////////////////*/

    /// @notice Why a submission was skipped instead of recorded.
    enum IgnoreReason {
        JobFinalized,
        JobExpired,
        DeadlinePassed,
        VoteLimitReached,
        LicenseNotLive,
        AlreadyVoted
    }

    /// @notice A job's life cycle. `None` marks an id never issued.
    enum JobStatus {
        None,
        Open,
        Finalized,
        Expired
    }

    /// @notice One node answer for one job, voted by each of `licenseIds` (all delegated to the caller).
    /// @param owner The job's owner and `asset` its asset, as its `VerificationRequested` event states them
    /// (the job keeps only their hash).
    /// @param queryResultHash keccak256 of exactly the API's QueryResult bytes: the 32-byte `balanceOf`
    /// word on Ethereum, the concatenated token-account data on Solana (the empty string's hash when the
    /// owner has no account).
    /// @param sourceBlock The Ethereum block number or Solana slot the answer was read at.
    struct Submission {
        uint256 jobId;
        uint256[] licenseIds;
        bytes32 owner;
        bytes32 asset;
        uint256 balance;
        bytes32 queryResultHash;
        uint64 sourceBlock;
    }

    /// @notice A job as nodes and tools see it. `callbackGasLimit` is the requester's limit when the job was
    /// opened, which its finalization will give the callback (nodes size their gas limits by it). Once a
    /// job finalizes its record holds the result instead of what only an open job needs: `deadline`,
    /// `fee`, `voteCount` and `callbackGasLimit` then read zero (the events keep them).
    // solhint-disable-next-line gas-struct-packing
    struct JobView {
        address requester;
        uint8 chain;
        JobStatus status;
        uint8 quorum;
        uint64 deadline;
        uint256 fee;
        uint256 voteCount;
        uint32 callbackGasLimit;
    }

    /// @notice A job's outcome: all fields but `status` are zero until it is finalized.
    struct Result {
        JobStatus status;
        uint256 balance;
        bytes32 queryResultHash;
        uint64 sourceBlock;
        uint64 finalizedAt;
    }

    /// @notice How a license's votes on finalized jobs turned out: matching the result or not.
    struct VoteStats {
        uint256 agreed;
        uint256 disagreed;
    }

    /// @notice A consumer's collateral: staked tokens free to use or withdraw, and reserved by open jobs.
    struct Collateral {
        uint128 available;
        uint128 reserved;
    }

    /*//////////////////////////////////////////////////////////////
                                 EVENTS
    //////////////////////////////////////////////////////////////*/

    /// @notice Emitted when `payer` adds `amount` staked tokens to `consumer`'s collateral (`staked` = the
    /// payer paid primary tokens that were staked on the way in).
    event CollateralDeposited(address indexed consumer, address indexed payer, uint256 amount, bool staked);

    /// @notice Emitted when `consumer` withdraws `amount` staked tokens of its free collateral (to itself).
    event CollateralWithdrawn(address indexed consumer, uint256 amount);

    /// @notice Emitted when a job is opened.
    event VerificationRequested(
        uint256 indexed jobId, address indexed requester, uint8 chain, bytes32 owner, bytes32 asset, uint256 fee
    );

    /// @notice Emitted for each license vote accepted on a job. `resultHash` is
    /// keccak256(abi.encode(subject, balance, queryResultHash)): the answer licenses agree on.
    event VoteSubmitted(
        uint256 indexed jobId, uint256 indexed licenseId, address indexed operator, bytes32 resultHash, uint64 sourceBlock
    );

    /// @notice Emitted when a submission is skipped and the rest of the batch goes on: its job is no longer
    /// open (another node finalized it, it expired or its deadline passed), it has no room for more votes,
    /// one of its licenses is not (or no longer) live and delegated to the caller, or one of its licenses
    /// already voted on the job in an earlier transaction (through another operator it was delegated to
    /// meanwhile). None of these is something the caller can rule out when it sends the batch.
    event SubmissionIgnored(uint256 indexed jobId, address indexed operator, IgnoreReason reason);

    /// @notice Emitted when `operator` commits to answers it will reveal later (`revealResults`).
    event ResultsCommitted(address indexed operator, bytes32 indexed commitment);

    /// @notice Emitted by `revealResults`, before the votes it casts (its `VoteSubmitted` events follow in the
    /// same transaction): `commitment` is what the revealed answers commit to, `revealCommitment`'s value.
    event ResultsRevealed(address indexed operator, bytes32 indexed commitment);

    /// @notice Emitted when a job reaches quorum.
    event VerificationFulfilled(
        uint256 indexed jobId,
        uint8 chain,
        bytes32 owner,
        bytes32 asset,
        uint256 balance,
        bytes32 queryResultHash,
        uint64 sourceBlock
    );

    /// @notice Emitted when the attestation verifier records a verified attestation for `payer`, who paid
    /// `fee` to the signing licenses `licenseIds` (what the network's quality-of-service figures count).
    event AttestationRecorded(
        address indexed payer,
        uint8 chain,
        bytes32 owner,
        bytes32 asset,
        uint256 balance,
        bytes32 queryResultHash,
        uint64 sourceBlock,
        uint64 issuedAt,
        uint256 fee,
        uint256[] licenseIds
    );

    /// @notice Emitted when an expired job's fee returns to the requester's collateral.
    event JobExpired(uint256 indexed jobId, address indexed requester, uint256 refundedFee);

    /// @notice Emitted when the consumer's callback reverted or ran out of gas (finalization stands).
    event CallbackFailed(uint256 indexed jobId, address indexed consumer);

    /// @notice Emitted when a consumer changes the gas limit of its callbacks (0 = no callback).
    event CallbackGasLimitUpdated(address indexed consumer, uint256 oldLimit, uint256 newLimit);

    /// @notice Emitted when the owner of `licenseId` claims its share of job fees, paid in staked tokens.
    event FeesClaimed(uint256 indexed licenseId, address indexed owner, uint256 amount);

    /// @notice Emitted when `opener` opens the fee account of `licenseId` (`openLicenseAccounts`).
    event LicenseAccountOpened(uint256 indexed licenseId, address indexed opener);

    /// @notice Emitted when governance changes the fee of new jobs.
    event RequestFeeUpdated(uint256 oldFee, uint256 newFee);

    /// @notice Emitted when governance changes the time limit of new jobs.
    event JobTimeoutUpdated(uint256 oldTimeout, uint256 newTimeout);

    /*//////////////////////////////////////////////////////////////
                                 ERRORS
    //////////////////////////////////////////////////////////////*/

    /// @notice Thrown when an address or identifier that must be set is zero.
    error VerificationRegistry_ZeroAddress();

    /// @notice Thrown when an amount that must be positive is zero.
    error VerificationRegistry_ZeroAmount();

    /// @notice Thrown when `consumer` has less free collateral than `needed`.
    error VerificationRegistry_InsufficientCollateral(address consumer, uint256 available, uint256 needed);

    /// @notice Thrown when a job id was never issued.
    error VerificationRegistry_UnknownJob(uint256 jobId);

    /// @notice Thrown when a submission names no license.
    error VerificationRegistry_NoLicenses(uint256 jobId);

    /// @notice Thrown when one submission names `licenseId` twice.
    error VerificationRegistry_DuplicateLicense(uint256 jobId, uint256 licenseId);

    /// @notice Thrown when a vote on an open job names another owner or asset than the job's request.
    error VerificationRegistry_WrongSubject(uint256 jobId);

    /// @notice Thrown when expiring a job that is not open, or asking for the votes of a finalized job
    /// (they are cleared when it finalizes; its `VoteSubmitted` events keep them).
    error VerificationRegistry_JobNotOpen(uint256 jobId, JobStatus status);

    /// @notice Thrown when expiring a job before its deadline has passed.
    error VerificationRegistry_JobNotExpired(uint256 jobId, uint256 deadline);

    /// @notice Thrown when the finalizing transaction leaves too little gas to give the consumer's callback
    /// its full gas limit (so a submitter cannot make a callback fail on purpose).
    error VerificationRegistry_InsufficientGasForCallback(uint256 jobId, uint256 callbackGasLimit);

    /// @notice Thrown when no job has finalized for the (chain, owner, asset) asked for.
    error VerificationRegistry_NoResult(uint8 chain, bytes32 owner, bytes32 asset);

    /// @notice Thrown when `caller` does not own `licenseId`.
    error VerificationRegistry_NotLicenseOwner(uint256 licenseId, address caller);

    /// @notice Thrown when a claim finds nothing to pay.
    error VerificationRegistry_NothingToClaim();

    /// @notice Thrown when opening the account of `licenseId`, which the license contract has not minted.
    error VerificationRegistry_UnknownLicense(uint256 licenseId);

    /// @notice Thrown when a job timeout is outside [MIN_JOB_TIMEOUT, MAX_JOB_TIMEOUT].
    error VerificationRegistry_InvalidJobTimeout(uint256 timeout);

    /// @notice Thrown when a callback gas limit is above `MAX_CALLBACK_GAS_LIMIT`.
    error VerificationRegistry_InvalidCallbackGasLimit(uint256 gasLimit);

    /// @notice Thrown when a fee does not fit the job record (above 2^96 - 1).
    error VerificationRegistry_InvalidFee(uint256 fee);

    /// @notice Thrown when recording an attestation issued no later than the one stored for its subject.
    error VerificationRegistry_AttestationNotNewer(uint64 issuedAt, uint64 storedIssuedAt);

    /// @notice Thrown when the epoch duration is zero.
    error VerificationRegistry_InvalidEpochDuration();

    /// @notice Thrown at deployment when the primary token's supply does not fit 96 bits (the registry's
    /// per-license fee credit and collateral are packed on that assumption).
    error VerificationRegistry_SupplyTooLarge();

    /*//////////////////////////////////////////////////////////////
                              CONSTANT VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @notice The role of the attestation verifier, allowed to record verified attestations.
    function ATTESTATION_ROLE() external view returns (bytes32);

    /// @notice The staked token collateral and fees are held in.
    function STAKED_TOKEN() external view returns (IStakedToken);

    /// @notice The primary token that backs fees (staked again for the licenses' owners when they claim).
    function PRIMARY_TOKEN() external view returns (IERC20);

    /// @notice The node registry that says which operator may vote for which license.
    function NODE_REGISTRY() external view returns (INodeRegistry);

    /// @notice The length of an epoch (quality of service and rewards), in seconds.
    function EPOCH_DURATION() external view returns (uint256);

    /// @notice The start of epoch 0 (the deployment time).
    function EPOCHS_START() external view returns (uint256);

    /// @notice The most votes one job accepts (bounds every loop over a job's votes).
    function MAX_VOTES_PER_JOB() external view returns (uint256);

    /// @notice The largest callback gas limit a consumer may set.
    function MAX_CALLBACK_GAS_LIMIT() external view returns (uint256);

    /// @notice The bounds governance may set the job timeout within.
    function MIN_JOB_TIMEOUT() external view returns (uint256);

    /// @notice The bounds governance may set the job timeout within.
    function MAX_JOB_TIMEOUT() external view returns (uint256);

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @notice The fee, in staked tokens, reserved by each new job.
    function requestFee() external view returns (uint256);

    /// @notice The time, in seconds, nodes have to finalize a new job.
    function jobTimeout() external view returns (uint256);

    /// @notice The id the next job will get (ids start at 1).
    function nextJobId() external view returns (uint256);

    /// @notice `consumer`'s collateral.
    function collateralOf(address consumer) external view returns (Collateral memory);

    /// @notice The gas limit of `consumer`'s callbacks (0 = no callback).
    function callbackGasLimitOf(address consumer) external view returns (uint256);

    /// @notice The job `jobId` (all fields zero for an id never issued).
    function getJob(uint256 jobId) external view returns (JobView memory);

    /// @notice Whether `licenseId` voted on `jobId`. Reverts with `VerificationRegistry_JobNotOpen` for a
    /// finalized job, whose votes are cleared.
    function hasVoted(uint256 jobId, uint256 licenseId) external view returns (bool);

    /// @notice The outcome of job `jobId`: balance, query result hash and source block or slot once it is
    /// finalized; `finalizedAt` is the finalization time.
    function getResult(uint256 jobId) external view returns (Result memory);

    /// @notice The latest result for (chain, owner, asset). Of two finalized jobs, the one with the higher
    /// job id (requested later, so read later) wins, whatever order they finalized in; its source block is
    /// the one the finalizing node reported. A recorded attestation issued after that job finalized wins
    /// over it: then `finalizedAt` is the attestation's issue time and `jobId` is 0.
    /// @dev Reverts with `VerificationRegistry_NoResult` when there is none: a missing result is not a zero.
    function latestBalance(
        uint8 chain,
        bytes32 owner,
        bytes32 asset
    ) external view returns (uint256 balance, uint64 sourceBlock, uint64 finalizedAt, uint256 jobId);

    /// @notice How `licenseId`'s votes on finalized jobs turned out (its accepted votes in all:
    /// `INodeRegistry.submissionsOf`).
    function voteStatsOf(uint256 licenseId) external view returns (VoteStats memory);

    /// @notice The job fees claimable for `licenseId`, in staked tokens.
    function claimableFees(uint256 licenseId) external view returns (uint256);

    /// @notice Whether the fee account of `licenseId` is open: its storage slot is written and stays non-zero,
    /// so crediting it a fee costs a rewrite (2,900 gas) instead of a first write (20,000). Opened by
    /// `openLicenseAccounts`, or by the first fee the license is credited.
    function isLicenseAccountOpen(uint256 licenseId) external view returns (bool);

    /// @notice Staked tokens burned for the fees of finalized jobs (and recorded attestations), as their
    /// licenses' owners claimed them: each claim burns the fees' staked tokens and stakes their backing
    /// primary tokens again for the owner.
    function totalFeesBurned() external view returns (uint256);

    /// @notice The epoch now.
    function currentEpoch() external view returns (uint256);

    /*//////////////////////////////////////////////////////////////
                           CONSUMER FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Adds `amount` of the caller's staked tokens to the caller's own collateral (requires an
    /// approval of this contract on the staked token). Staked tokens never move between two ordinary
    /// accounts, so they can only come back to the account that deposited them: to fund another consumer
    /// (a consumer contract, say), use `stakeCollateral`.
    function depositCollateral(uint256 amount) external;

    /// @notice Stakes `amount` of the caller's primary tokens straight into `consumer`'s collateral
    /// (requires an approval of this contract on the primary token). Like `StakedToken.stakeFor`, this
    /// mints new staked tokens for `consumer`, so anyone may fund anyone.
    function stakeCollateral(address consumer, uint256 amount) external;

    /// @notice Sends `amount` of the caller's free collateral back to the caller, in staked tokens.
    function withdrawCollateral(uint256 amount) external;

    /// @notice Sets the gas limit for the caller's callbacks on finalization of its later jobs (0 = none).
    function setCallbackGasLimit(uint256 gasLimit) external;

    /// @notice Opens a job for the ERC-20 or ERC-721 `token` balance of `owner` on Ethereum.
    function requestEvmBalance(address owner, address token) external returns (uint256 jobId);

    /// @notice Opens a job for the SPL token (or NFT) `mint` balance of `owner` on Solana.
    function requestSvmBalance(bytes32 owner, bytes32 mint) external returns (uint256 jobId);

    /// @notice Expires job `jobId` after its deadline and returns its fee to the requester's collateral.
    function expireJob(uint256 jobId) external;

    /// @notice Records a verified attestation (ATTESTATION_ROLE: the attestation verifier, which checked the
    /// signatures, the licenses and the quorum): charges the request fee to `payer`'s free collateral,
    /// credits it to `licenseIds` (the signing licenses, equal shares, the first taking the rounding
    /// remainder), and stores the result for `latestBalance` if it was issued after
    /// the one stored for its subject.
    function recordAttestedResult(
        address payer,
        IAttestationVerifier.BalanceAttestation calldata result,
        uint256[] calldata licenseIds
    ) external;

    /*//////////////////////////////////////////////////////////////
                             NODE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Submits answers for one or many jobs. Reverts on the caller's own errors (a license named
    /// twice in one submission, an unknown job, a vote on an open job about another subject than its request's);
    /// skips with `SubmissionIgnored` what others can cause (the job closed or filled up, a license was
    /// transferred, or voted meanwhile through another operator), so a race never fails the whole batch.
    function submitResults(Submission[] calldata submissions) external;

    /// @notice Commits to answers without showing them: `commitment` is `revealCommitment` of the caller, a
    /// secret salt and the `revealResults` calldata that will reveal them. Stores nothing; the event is the record.
    /// A vote revealed after its commitment counts as the caller's own answer, not a copy, when the commitment
    /// came before the job's first revealed answer equal to the quorum's (docs/verification.md, "No credit
    /// for copying"). Such votes are what epoch rewards pay.
    function commitResults(bytes32 commitment) external;

    /// @notice Casts the votes of `submissions`, as `submitResults` does, and emits `ResultsRevealed` with the
    /// commitment they reveal: `revealCommitment(msg.sender, salt, msg.data[36:])`.
    function revealResults(bytes32 salt, Submission[] calldata submissions) external;

    /// @notice The commitment to a reveal: keccak256(abi.encode(operator, salt, keccak256(tail))), where `tail`
    /// is the `revealResults` calldata after the selector and the salt (the submissions' ABI encoding). Bound to
    /// the operator, so another account cannot reveal (or claim) someone's commitment.
    function revealCommitment(address operator, bytes32 salt, bytes calldata tail) external pure returns (bytes32);

    /// @notice Pays the job fees accrued to `licenseIds` (all owned by the caller), in staked tokens: the
    /// fees' staked tokens are burned and the primary tokens that backed them are staked for the caller,
    /// so turning them into primary tokens goes through a redemption like any other staked tokens (a
    /// consumer that votes on its own jobs with its own licenses gets no instant refund).
    function claimFees(uint256[] calldata licenseIds) external;

    /// @notice Opens the fee accounts of `licenseIds` (minted licenses; an unknown id reverts the whole call):
    /// writes each account's storage slot once, with a marker that no claim clears, so that no fee credited
    /// to the license later pays for that slot's first write (about 17,000 gas more than a rewrite). Without
    /// it, the first recording or finalization that pays a license would pay that write for it, and the
    /// integrator who recorded would carry the network's set-up cost. The license's owner, when delegating,
    /// or its node, when it starts, calls this: whoever will earn the license's fees pays the write, once.
    /// Anyone may call it for any license: it changes no amount or count, and makes later writes of the
    /// account cheaper, never dearer. Idempotent: an account already open is skipped (no write, no event).
    function openLicenseAccounts(uint256[] calldata licenseIds) external;

    /*//////////////////////////////////////////////////////////////
                          GOVERNANCE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Sets the fee of new jobs.
    function setRequestFee(uint256 fee) external;

    /// @notice Sets the time limit of new jobs.
    function setJobTimeout(uint256 timeout) external;
}

/// @title IVerificationConsumer
/// @notice Implemented by a consumer contract that wants to be called when its jobs finalize (enable with
/// `setCallbackGasLimit`). The call gets exactly the consumer's gas limit; if it reverts or runs out of
/// gas, the job stays finalized and the registry emits `CallbackFailed`. Check `msg.sender`.
interface IVerificationConsumer {
    function onVerificationFulfilled(
        uint256 jobId,
        uint8 chain,
        bytes32 owner,
        bytes32 asset,
        uint256 balance,
        uint64 sourceBlock
    ) external;
}
