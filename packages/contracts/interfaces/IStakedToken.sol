// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { IERC20Metadata } from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";

/// @title IStakedToken
/// @notice A non-transferable token backed 1:1 by the primary token. Anyone stakes primary tokens for
/// staked tokens at any time, without fee or lock. The way back is a redemption: the holder picks an
/// unlock period, and the longer the period, the larger the share of the staked amount paid out in
/// primary tokens, always below 100%. The unpaid share is destroyed for good and its backing goes to a
/// governance-set recipient. Protocol contracts allowlisted by governance (for example the verification
/// registry's collateral escrow) may hold staked tokens, return them, and burn them for services,
/// releasing the backing primary tokens to a recipient they name.
///
/// A protocol contract is trusted with two rules the token cannot check itself: it returns staked tokens
/// only to the account that deposited them (otherwise it is a transfer hub between ordinary accounts),
/// and it never lets a depositor steer the recipient of `burnForService` (otherwise a service burn is a
/// redemption at 100% without unlock period). Governance allowlists only contracts that keep both.
/// @dev Invariant: `PRIMARY_TOKEN.balanceOf(this) >= totalSupply() + totalPendingRedemptions()`.
interface IStakedToken is IERC20Metadata {
    /*//////////////////////////////////////////////////////////////
                                 TYPES
    //////////////////////////////////////////////////////////////*/

    /// @notice The life cycle of a redemption request. `None` marks an id that was never issued.
    enum RedemptionStatus {
        None,
        Pending,
        Cancelled,
        Completed
    }

    /// @notice A redemption request, fixed when it is made.
    /// @param stakedAmount The staked tokens taken out of circulation by the request.
    /// @param primaryAmount The primary tokens paid on completion (rate fixed at request time).
    /// @param requester The holder who made the request; the only one who can cancel or complete it.
    /// @param unlockTime The timestamp from which the request can be completed.
    /// @param status The request's state.
    struct Redemption {
        uint128 stakedAmount;
        uint128 primaryAmount;
        address requester;
        uint64 unlockTime;
        RedemptionStatus status;
    }

    /// @notice The redemption rate schedule: the rate rises linearly from `minRate` at `minPeriod` to
    /// `maxRate` at `maxPeriod`. Rates are fractions scaled by 1e18 (1e18 = 100%).
    /// @param minPeriod The shortest unlock period, in seconds.
    /// @param maxPeriod The longest unlock period, in seconds.
    /// @param minRate The rate paid for `minPeriod`.
    /// @param maxRate The rate paid for `maxPeriod`; below 1e18.
    struct RateSchedule {
        uint64 minPeriod;
        uint64 maxPeriod;
        uint64 minRate;
        uint64 maxRate;
    }

    /*//////////////////////////////////////////////////////////////
                                 EVENTS
    //////////////////////////////////////////////////////////////*/

    /// @notice Emitted when `payer` stakes `amount` primary tokens and `to` receives `amount` staked tokens.
    event Staked(address indexed payer, address indexed to, uint256 amount);

    /// @notice Emitted when `requester` takes `stakedAmount` out of circulation for `primaryAmount`
    /// primary tokens payable from `unlockTime`.
    event RedemptionRequested(
        uint256 indexed id,
        address indexed requester,
        uint256 stakedAmount,
        uint256 primaryAmount,
        uint256 unlockPeriod,
        uint256 unlockTime
    );

    /// @notice Emitted when a pending redemption is cancelled and its staked amount returned.
    event RedemptionCancelled(uint256 indexed id, address indexed requester, uint256 stakedAmount);

    /// @notice Emitted when a redemption is completed: `primaryAmount` paid to the requester and the
    /// backing of the unpaid share, `forfeitedAmount`, sent to `forfeitRecipient`.
    event RedemptionCompleted(
        uint256 indexed id,
        address indexed requester,
        uint256 primaryAmount,
        uint256 forfeitedAmount,
        address forfeitRecipient
    );

    /// @notice Emitted when protocol contract `protocol` burns `amount` staked tokens it holds for
    /// services rendered, sending the `amount` backing primary tokens to `primaryRecipient`.
    event BurnedForService(address indexed protocol, address indexed primaryRecipient, uint256 amount);

    /// @notice Emitted when governance changes the redemption rate schedule.
    event RateScheduleUpdated(RateSchedule oldSchedule, RateSchedule newSchedule);

    /// @notice Emitted when governance changes the recipient of forfeited redemption backing.
    event ForfeitRecipientUpdated(address oldRecipient, address newRecipient);

    /*//////////////////////////////////////////////////////////////
                                 ERRORS
    //////////////////////////////////////////////////////////////*/

    /// @notice Thrown when an amount that must be positive is zero.
    error StakedToken_ZeroAmount();

    /// @notice Thrown when an address that must be set is the zero address.
    error StakedToken_ZeroAddress();

    /// @notice Thrown when staked tokens would move between two accounts that are not protocol contracts.
    error StakedToken_TransferNotAllowed(address from, address to);

    /// @notice Thrown when an approval names a spender that is not a protocol contract.
    error StakedToken_ApprovalNotAllowed(address owner, address spender);

    /// @notice Thrown when a recipient of primary tokens is the zero address or this contract.
    error StakedToken_InvalidRecipient(address recipient);

    /// @notice Thrown when the primary token does not have the staked token's 18 decimals.
    error StakedToken_DecimalsMismatch(uint8 primaryDecimals, uint8 stakedDecimals);

    /// @notice Thrown when the protocol role is granted to an address without code (or an EIP-7702 EOA).
    error StakedToken_ProtocolNotContract(address account);

    /// @notice Thrown when the unlock period lies outside [minPeriod, maxPeriod].
    error StakedToken_UnlockPeriodOutOfRange(uint256 unlockPeriod, uint256 minPeriod, uint256 maxPeriod);

    /// @notice Thrown when a redemption would pay no primary token at all (amount too small for the rate).
    error StakedToken_RedemptionTooSmall(uint256 stakedAmount, uint256 unlockPeriod);

    /// @notice Thrown when `caller` acts on redemption `id` that belongs to someone else.
    error StakedToken_NotRequester(uint256 id, address caller);

    /// @notice Thrown when redemption `id` is not pending (never issued, cancelled or completed).
    error StakedToken_RedemptionNotPending(uint256 id, RedemptionStatus status);

    /// @notice Thrown when redemption `id` is completed before its unlock time.
    error StakedToken_RedemptionLocked(uint256 id, uint256 unlockTime);

    /// @notice Thrown when a rate schedule starts at 0%, is not strictly rising, reaches 100%, or has
    /// out-of-range periods.
    error StakedToken_InvalidRateSchedule(RateSchedule schedule);

    /*//////////////////////////////////////////////////////////////
                              CONSTANT VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @notice The role of protocol contracts that may hold, return and burn staked tokens.
    function PROTOCOL_ROLE() external view returns (bytes32);

    /// @notice The primary token that backs the staked token 1:1.
    function PRIMARY_TOKEN() external view returns (IERC20);

    /// @notice The longest unlock period governance may ever set, in seconds.
    function MAX_UNLOCK_PERIOD_CAP() external view returns (uint256);

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @notice The shortest unlock period a redemption may pick, in seconds.
    function minUnlockPeriod() external view returns (uint256);

    /// @notice The longest unlock period a redemption may pick, in seconds.
    function maxUnlockPeriod() external view returns (uint256);

    /// @notice The current rate schedule.
    function rateSchedule() external view returns (RateSchedule memory);

    /// @notice The rate (1e18 = 100%) that a redemption with `unlockPeriod` gets now, rounded down.
    /// @dev Reverts with `StakedToken_UnlockPeriodOutOfRange` outside [minUnlockPeriod, maxUnlockPeriod].
    function redemptionRate(uint256 unlockPeriod) external view returns (uint256 rate);

    /// @notice The primary tokens a redemption of `amount` with `unlockPeriod` would pay if made now,
    /// rounded down.
    function previewRedemption(uint256 amount, uint256 unlockPeriod) external view returns (uint256 primaryOut);

    /// @notice The recipient of the primary tokens that backed the unpaid share of completed redemptions.
    function forfeitRecipient() external view returns (address);

    /// @notice Staked tokens taken out of circulation by pending redemption requests.
    function totalPendingRedemptions() external view returns (uint256);

    /// @notice The id the next redemption request will get (ids start at 1).
    function nextRedemptionId() external view returns (uint256);

    /// @notice The redemption request `id` (all fields zero for an id never issued).
    function getRedemption(uint256 id) external view returns (Redemption memory);

    /// @notice The number of pending redemption requests of `holder`.
    function pendingRedemptionCount(address holder) external view returns (uint256);

    /// @notice A page of the pending redemption ids of `holder`: at most `limit` ids from position
    /// `offset`. The order is unspecified and changes when a request leaves the pending set.
    function pendingRedemptionIds(
        address holder,
        uint256 offset,
        uint256 limit
    ) external view returns (uint256[] memory ids);

    /// @notice Whether `account` is an allowlisted protocol contract.
    function isProtocol(address account) external view returns (bool);

    /*//////////////////////////////////////////////////////////////
                             USER FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Stakes `amount` primary tokens of the caller for the same amount of staked tokens.
    /// @dev The caller must have approved this contract for `amount` primary tokens.
    function stake(uint256 amount) external;

    /// @notice Stakes `amount` primary tokens of the caller; `to` receives the staked tokens.
    function stakeFor(address to, uint256 amount) external;

    /// @notice Takes `amount` staked tokens of the caller out of circulation now and fixes the primary
    /// amount paid on completion, after `unlockPeriod` seconds, at the current rate.
    /// @return id The request's id.
    function requestRedemption(uint256 amount, uint256 unlockPeriod) external returns (uint256 id);

    /// @notice Cancels pending request `id` of the caller and returns its full staked amount.
    function cancelRedemption(uint256 id) external;

    /// @notice Completes pending request `id` of the caller after its unlock time: pays its primary amount
    /// to the caller and sends the backing of the unpaid share to the forfeit recipient.
    function completeRedemption(uint256 id) external;

    /*//////////////////////////////////////////////////////////////
                           PROTOCOL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Burns `amount` staked tokens held by the calling protocol contract for services rendered and
    /// sends the `amount` primary tokens that backed them to `primaryRecipient`.
    function burnForService(uint256 amount, address primaryRecipient) external;

    /*//////////////////////////////////////////////////////////////
                          GOVERNANCE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Sets the rate schedule for future requests; requests already made keep their amounts.
    function setRateSchedule(RateSchedule calldata schedule) external;

    /// @notice Sets the recipient of forfeited redemption backing.
    function setForfeitRecipient(address recipient) external;
}
