// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";

import { INodeRegistry } from "./INodeRegistry.sol";
import { IStakedToken } from "./IStakedToken.sol";
import { IVerificationRegistry } from "./IVerificationRegistry.sol";

/// @title IRewardPools
/// @notice The network's epoch rewards, split by quality of service. Governance funds a pool per epoch in
/// primary tokens. After the epoch, each license's score and weight follow from the registries' events by the
/// published formula (docs/verification.md, "Quality of service"): a pure function of the chain, which every
/// node computes alike. The nodes vote the Merkle root of the resulting payouts, and a root that a quorum of
/// distinct live licenses voted is accepted. Governance can reject it during a dispute period; then each
/// license owner claims its payout with a proof, paid in staked tokens.
/// @dev Settling costs one vote per node per epoch, and claims are pulled per license, so nothing loops over
/// every license. The pool caps the sum of claims, whatever a root says. A root is trusted as the network's
/// answers are: a colluding quorum could already decide every job's outcome, and therefore every score.
/// Leaves are OpenZeppelin StandardMerkleTree leaves of `(uint256 epoch, uint256 licenseId, uint256 amount)`:
/// `keccak256(bytes.concat(keccak256(abi.encode(epoch, licenseId, amount))))`.
interface IRewardPools {
    /// @notice One license's payout of one epoch, as the accepted root holds it.
    /// @custom:field epoch The ended epoch.
    /// @custom:field licenseId The license paid (its owner at claim time receives the payout).
    /// @custom:field amount Primary tokens, paid as staked tokens.
    /// @custom:field proof The Merkle proof of the leaf under the epoch's accepted root.
    struct Claim {
        uint256 epoch;
        uint256 licenseId;
        uint256 amount;
        bytes32[] proof;
    }

    /// @notice An epoch's pool and the state of its settlement.
    /// @custom:field pool Primary tokens funded for the epoch (0 once rolled over).
    /// @custom:field claimed Of those, the amount claimed so far.
    /// @custom:field root The accepted root (zero when none is, or when nobody earned).
    /// @custom:field accepted Whether a root is accepted in the current round.
    /// @custom:field round Incremented by each rejection: licenses vote again.
    /// @custom:field settlementOpensAt When root votes open: the epoch's end plus `SETTLEMENT_DELAY`.
    /// @custom:field votingClosesAt When root votes close: one epoch after they open.
    /// @custom:field claimsOpenAt When claims open: acceptance plus `DISPUTE_PERIOD` (0 while none is accepted).
    struct EpochSettlement {
        uint256 pool;
        uint256 claimed;
        bytes32 root;
        bool accepted;
        uint256 round;
        uint256 settlementOpensAt;
        uint256 votingClosesAt;
        uint256 claimsOpenAt;
    }

    /// @notice Emitted when `funder` adds `amount` primary tokens to `epoch`'s pool.
    event EpochRewardsFunded(uint256 indexed epoch, address indexed funder, uint256 amount);

    /// @notice Emitted when `operator` votes `root` for `epoch` with `licenseIds`; `votes` is the root's tally.
    event RewardsRootVoted(
        uint256 indexed epoch,
        bytes32 indexed root,
        address indexed operator,
        uint256 round,
        uint256[] licenseIds,
        uint256 votes
    );

    /// @notice Emitted when `root` reaches the quorum for `epoch`: claims open at `claimsOpenAt`.
    event RewardsRootAccepted(uint256 indexed epoch, bytes32 indexed root, uint256 round, uint256 claimsOpenAt);

    /// @notice Emitted when governance rejects `epoch`'s accepted `root` in its dispute period.
    event RewardsRootRejected(uint256 indexed epoch, bytes32 indexed root, uint256 round);

    /// @notice Emitted when the owner of `licenseId` claims its `epoch` payout.
    event RewardsClaimed(uint256 indexed epoch, uint256 indexed licenseId, address indexed owner, uint256 amount);

    /// @notice Emitted when the pool of an ended epoch that paid nobody moves to a later epoch.
    event EpochRewardsRolledOver(uint256 indexed fromEpoch, uint256 indexed toEpoch, uint256 amount);

    /// @notice Thrown when a constructor address is zero.
    error RewardPools_ZeroAddress();

    /// @notice Thrown when a settlement delay or dispute period exceeds `MAX_PERIOD`.
    error RewardPools_InvalidPeriod(uint256 period);

    /// @notice Thrown when an amount is zero.
    error RewardPools_ZeroAmount();

    /// @notice Thrown when funding an epoch that has ended.
    error RewardPools_EpochEnded(uint256 epoch, uint256 currentEpoch);

    /// @notice Thrown when voting a root outside the epoch's voting window.
    error RewardPools_VotingClosed(uint256 epoch, uint256 opensAt, uint256 closesAt);

    /// @notice Thrown when voting after a root was accepted in this round.
    error RewardPools_RootAccepted(uint256 epoch);

    /// @notice Thrown when a vote names no license.
    error RewardPools_NoLicenses();

    /// @notice Thrown when the caller is not the live operator of every license it votes with.
    error RewardPools_NotLiveOperator(address caller);

    /// @notice Thrown when a license votes twice in one round.
    error RewardPools_AlreadyVoted(uint256 epoch, uint256 licenseId);

    /// @notice Thrown when rejecting without an accepted root, or after claims opened.
    error RewardPools_NotDisputable(uint256 epoch);

    /// @notice Thrown when claiming before the epoch's root is accepted and its dispute period over.
    error RewardPools_ClaimsNotOpen(uint256 epoch);

    /// @notice Thrown when claiming a license's payout twice.
    error RewardPools_AlreadyClaimed(uint256 epoch, uint256 licenseId);

    /// @notice Thrown when a claim's proof does not lead to the accepted root.
    error RewardPools_InvalidProof(uint256 epoch, uint256 licenseId);

    /// @notice Thrown when a claim would take the epoch's claims above its pool.
    error RewardPools_PoolExceeded(uint256 epoch, uint256 pool, uint256 claimed);

    /// @notice Thrown when the caller does not own the license it claims for.
    error RewardPools_NotLicenseOwner(uint256 licenseId, address caller);

    /// @notice Thrown when a claim pays nothing.
    error RewardPools_NothingToClaim();

    /// @notice Thrown when rolling over an epoch that paid someone, has no pool, or may still settle.
    error RewardPools_CannotRollOver(uint256 epoch);

    /// @notice The role allowed to fund pools.
    function REWARDS_FUNDER_ROLE() external view returns (bytes32);

    /// @notice The longest settlement delay and dispute period: 30 days.
    function MAX_PERIOD() external view returns (uint256);

    /// @notice The verification registry whose epochs and jobs the pools reward.
    function REGISTRY() external view returns (IVerificationRegistry);

    /// @notice The node registry whose live licenses vote roots.
    function NODE_REGISTRY() external view returns (INodeRegistry);

    /// @notice The token pools are funded in.
    function PRIMARY_TOKEN() external view returns (IERC20);

    /// @notice The token payouts are staked into.
    function STAKED_TOKEN() external view returns (IStakedToken);

    /// @notice Seconds after an epoch's end before its root can be voted, so that its jobs can finalize.
    function SETTLEMENT_DELAY() external view returns (uint256);

    /// @notice Seconds after a root's acceptance during which governance can reject it.
    function DISPUTE_PERIOD() external view returns (uint256);

    /// @notice Adds `amount` primary tokens to the pool of `epoch` (current or future).
    function fundEpochRewards(uint256 epoch, uint256 amount) external;

    /// @notice Votes `root` as `epoch`'s payouts with `licenseIds`, of which the caller is the live operator.
    /// @dev `root` zero means nobody earned. The root is accepted once its votes reach the node registry's quorum.
    function voteRewardsRoot(uint256 epoch, bytes32 root, uint256[] calldata licenseIds) external;

    /// @notice Rejects `epoch`'s accepted root during its dispute period; licenses vote again. Governance only.
    function rejectRewardsRoot(uint256 epoch) external;

    /// @notice Pays `claims` (licenses the caller owns), in staked tokens.
    function claimRewards(Claim[] calldata claims) external;

    /// @notice Moves an ended epoch's pool to the current epoch when its accepted root is zero (claims open),
    /// or when no root was accepted before voting closed. Anyone.
    function rollOverEpochRewards(uint256 epoch) external;

    /// @notice The reward epoch now: the registry's.
    function currentEpoch() external view returns (uint256);

    /// @notice `epoch`'s pool and settlement.
    function settlementOf(uint256 epoch) external view returns (EpochSettlement memory);

    /// @notice The votes `root` has for `epoch` in the current round.
    function rootVotesOf(uint256 epoch, bytes32 root) external view returns (uint256);

    /// @notice Whether `licenseId` voted a root for `epoch` in the current round.
    function hasVotedRoot(uint256 epoch, uint256 licenseId) external view returns (bool);

    /// @notice Whether `licenseId`'s `epoch` payout was claimed.
    function isClaimed(uint256 epoch, uint256 licenseId) external view returns (bool);
}
