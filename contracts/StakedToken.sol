// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AccessControlDefaultAdminRules } from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import { ERC20 } from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { IERC20Metadata } from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import { SafeERC20 } from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import { Math } from "@openzeppelin/contracts/utils/math/Math.sol";
import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import { EnumerableSet } from "@openzeppelin/contracts/utils/structs/EnumerableSet.sol";

import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";

/// @title StakedToken
/// @notice See {IStakedToken}.
/// @dev A redemption burns the staked amount at request time and records it in `totalPendingRedemptions`,
/// so the primary tokens held always cover `totalSupply() + totalPendingRedemptions()`: completion pays
/// out exactly the request's staked amount (requester share + forfeited share), cancellation re-mints it,
/// and a service burn releases exactly the burned amount. The primary token is trusted to be a plain
/// ERC-20 (no transfer fee, no callbacks), which the network's own token and its OP-bridged twin are.
contract StakedToken is ERC20, AccessControlDefaultAdminRules, IStakedToken {
    using EnumerableSet for EnumerableSet.UintSet;
    using SafeCast for uint256;
    using SafeERC20 for IERC20;

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IStakedToken
    bytes32 public constant PROTOCOL_ROLE = keccak256("PROTOCOL_ROLE");

    /// @inheritdoc IStakedToken
    uint256 public constant MAX_UNLOCK_PERIOD_CAP = 4 * 365 days;

    /// @dev Rates are fractions scaled by this (1e18 = 100%).
    uint256 private constant _RATE_ONE = 1e18;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IStakedToken
    IERC20 public immutable PRIMARY_TOKEN;

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IStakedToken
    address public forfeitRecipient;

    /// @inheritdoc IStakedToken
    uint256 public totalPendingRedemptions;

    /// @inheritdoc IStakedToken
    uint256 public nextRedemptionId = 1;

    RateSchedule internal _rateSchedule;

    mapping(uint256 id => Redemption redemption) internal _redemptions;

    mapping(address holder => EnumerableSet.UintSet ids) internal _pendingIds;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param name_ The token name.
    /// @param symbol_ The token symbol.
    /// @param primaryToken The backing token (on L2, the bridged primary token).
    /// @param admin The governance account (a multisig or timelock live) that holds the admin role.
    /// @param adminTransferDelay The delay of OpenZeppelin's two-step admin transfer, in seconds.
    /// @param schedule The initial rate schedule.
    /// @param forfeitRecipient_ The initial recipient of forfeited redemption backing.
    constructor(
        string memory name_,
        string memory symbol_,
        IERC20 primaryToken,
        address admin,
        uint48 adminTransferDelay,
        RateSchedule memory schedule,
        address forfeitRecipient_
    ) ERC20(name_, symbol_) AccessControlDefaultAdminRules(adminTransferDelay, admin) {
        if (address(primaryToken) == address(0)) revert StakedToken_ZeroAddress();
        // 1:1 backing is in base units: both tokens must count them with the same decimals.
        uint8 primaryDecimals = IERC20Metadata(address(primaryToken)).decimals();
        if (primaryDecimals != decimals()) revert StakedToken_DecimalsMismatch(primaryDecimals, decimals());
        PRIMARY_TOKEN = primaryToken;
        _setRateSchedule(schedule);
        _setForfeitRecipient(forfeitRecipient_);
    }

    /*//////////////////////////////////////////////////////////////
                          EXTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IStakedToken
    function stake(uint256 amount) external {
        _stake(msg.sender, amount);
    }

    /// @inheritdoc IStakedToken
    function stakeFor(address to, uint256 amount) external {
        _stake(to, amount);
    }

    /// @inheritdoc IStakedToken
    function requestRedemption(uint256 amount, uint256 unlockPeriod) external returns (uint256 id) {
        if (amount == 0) revert StakedToken_ZeroAmount();
        uint256 primaryAmount = previewRedemption(amount, unlockPeriod);
        // A request that pays nothing would destroy the holder's tokens for no return: refuse it.
        if (primaryAmount == 0) revert StakedToken_RedemptionTooSmall(amount, unlockPeriod);

        id = nextRedemptionId;
        ++nextRedemptionId;
        uint256 unlockTime = block.timestamp + unlockPeriod;
        _redemptions[id] = Redemption({
            stakedAmount: amount.toUint128(),
            primaryAmount: primaryAmount.toUint128(),
            requester: msg.sender,
            unlockTime: unlockTime.toUint64(),
            status: RedemptionStatus.Pending
        });
        _pendingIds[msg.sender].add(id);
        totalPendingRedemptions += amount;
        // Reverts with ERC20InsufficientBalance when the caller holds less than `amount`.
        _burn(msg.sender, amount);

        emit RedemptionRequested(id, msg.sender, amount, primaryAmount, unlockPeriod, unlockTime);
    }

    /// @inheritdoc IStakedToken
    function cancelRedemption(uint256 id) external {
        Redemption storage redemption = _pendingRedemptionOfCaller(id);
        uint256 stakedAmount = redemption.stakedAmount;

        redemption.status = RedemptionStatus.Cancelled;
        _pendingIds[msg.sender].remove(id);
        totalPendingRedemptions -= stakedAmount;
        _mint(msg.sender, stakedAmount);

        emit RedemptionCancelled(id, msg.sender, stakedAmount);
    }

    /// @inheritdoc IStakedToken
    function completeRedemption(uint256 id) external {
        Redemption storage redemption = _pendingRedemptionOfCaller(id);
        if (block.timestamp < redemption.unlockTime) {
            revert StakedToken_RedemptionLocked(id, redemption.unlockTime);
        }
        uint256 stakedAmount = redemption.stakedAmount;
        uint256 primaryAmount = redemption.primaryAmount;
        uint256 forfeitedAmount = stakedAmount - primaryAmount;
        address recipient = forfeitRecipient;

        redemption.status = RedemptionStatus.Completed;
        _pendingIds[msg.sender].remove(id);
        totalPendingRedemptions -= stakedAmount;

        PRIMARY_TOKEN.safeTransfer(msg.sender, primaryAmount);
        // Never zero: every rate is below 100% and the payout rounds down.
        PRIMARY_TOKEN.safeTransfer(recipient, forfeitedAmount);

        emit RedemptionCompleted(id, msg.sender, primaryAmount, forfeitedAmount, recipient);
    }

    /// @inheritdoc IStakedToken
    function burnForService(uint256 amount, address primaryRecipient) external onlyRole(PROTOCOL_ROLE) {
        if (amount == 0) revert StakedToken_ZeroAmount();
        _checkPrimaryRecipient(primaryRecipient);

        _burn(msg.sender, amount);
        PRIMARY_TOKEN.safeTransfer(primaryRecipient, amount);

        emit BurnedForService(msg.sender, primaryRecipient, amount);
    }

    /// @inheritdoc IStakedToken
    function setRateSchedule(RateSchedule calldata schedule) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setRateSchedule(schedule);
    }

    /// @inheritdoc IStakedToken
    function setForfeitRecipient(address recipient) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setForfeitRecipient(recipient);
    }

    /// @inheritdoc IStakedToken
    function rateSchedule() external view returns (RateSchedule memory) {
        return _rateSchedule;
    }

    /// @inheritdoc IStakedToken
    function minUnlockPeriod() external view returns (uint256) {
        return _rateSchedule.minPeriod;
    }

    /// @inheritdoc IStakedToken
    function maxUnlockPeriod() external view returns (uint256) {
        return _rateSchedule.maxPeriod;
    }

    /// @inheritdoc IStakedToken
    function getRedemption(uint256 id) external view returns (Redemption memory) {
        return _redemptions[id];
    }

    /// @inheritdoc IStakedToken
    function pendingRedemptionCount(address holder) external view returns (uint256) {
        return _pendingIds[holder].length();
    }

    /// @inheritdoc IStakedToken
    function pendingRedemptionIds(
        address holder,
        uint256 offset,
        uint256 limit
    ) external view returns (uint256[] memory ids) {
        EnumerableSet.UintSet storage pending = _pendingIds[holder];
        uint256 length = pending.length();
        if (offset >= length) return new uint256[](0);
        ids = new uint256[](Math.min(limit, length - offset));
        for (uint256 i = 0; i < ids.length; ++i) {
            ids[i] = pending.at(offset + i);
        }
    }

    /*//////////////////////////////////////////////////////////////
                           PUBLIC FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @notice Approvals are only allowed towards protocol contracts (for example to deposit collateral).
    /// Setting an allowance to zero is always allowed, so that allowances to a contract that lost its
    /// protocol role can still be revoked.
    function approve(address spender, uint256 value) public override(ERC20, IERC20) returns (bool) {
        if (value != 0 && !isProtocol(spender)) revert StakedToken_ApprovalNotAllowed(msg.sender, spender);
        return super.approve(spender, value);
    }

    /// @notice Checks the transfer rule before the allowance, so that a transfer between two ordinary
    /// accounts fails with `StakedToken_TransferNotAllowed` whatever the allowance.
    function transferFrom(address from, address to, uint256 value) public override(ERC20, IERC20) returns (bool) {
        _checkTransferAllowed(from, to);
        return super.transferFrom(from, to, value);
    }

    /// @inheritdoc IStakedToken
    function redemptionRate(uint256 unlockPeriod) public view returns (uint256 rate) {
        RateSchedule memory schedule = _rateSchedule;
        if (unlockPeriod < schedule.minPeriod || unlockPeriod > schedule.maxPeriod) {
            revert StakedToken_UnlockPeriodOutOfRange(unlockPeriod, schedule.minPeriod, schedule.maxPeriod);
        }
        // Linear interpolation, rounded down: the rounding never favours the requester.
        rate = schedule.minRate
            + Math.mulDiv(
                schedule.maxRate - schedule.minRate,
                unlockPeriod - schedule.minPeriod,
                schedule.maxPeriod - schedule.minPeriod
            );
    }

    /// @inheritdoc IStakedToken
    function previewRedemption(uint256 amount, uint256 unlockPeriod) public view returns (uint256 primaryOut) {
        primaryOut = Math.mulDiv(amount, redemptionRate(unlockPeriod), _RATE_ONE);
    }

    /// @inheritdoc IStakedToken
    function isProtocol(address account) public view returns (bool) {
        return hasRole(PROTOCOL_ROLE, account);
    }

    /*//////////////////////////////////////////////////////////////
                          INTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @dev Staked tokens move between two accounts only when one side is a protocol contract; mints and
    /// burns are unrestricted here because only this contract's own flows call them.
    function _update(address from, address to, uint256 value) internal override {
        if (from != address(0) && to != address(0)) _checkTransferAllowed(from, to);
        super._update(from, to, value);
    }

    /// @dev A protocol allowlisting must name a contract: an ordinary account holding the role would let
    /// staked tokens flow between ordinary accounts through it. An EOA with an EIP-7702 delegation has
    /// code too (the 23-byte designator 0xef0100 ++ address), so it is refused as well.
    function _grantRole(bytes32 role, address account) internal override returns (bool) {
        if (role == PROTOCOL_ROLE) {
            bytes memory code = account.code;
            if (code.length == 0 || (code.length == 23 && bytes3(code) == 0xef0100)) {
                revert StakedToken_ProtocolNotContract(account);
            }
        }
        return super._grantRole(role, account);
    }

    /*//////////////////////////////////////////////////////////////
                          PRIVATE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    function _checkTransferAllowed(address from, address to) private view {
        if (!isProtocol(from) && !isProtocol(to)) revert StakedToken_TransferNotAllowed(from, to);
    }

    function _stake(address to, uint256 amount) private {
        if (amount == 0) revert StakedToken_ZeroAmount();
        if (to == address(0)) revert StakedToken_ZeroAddress();

        PRIMARY_TOKEN.safeTransferFrom(msg.sender, address(this), amount);
        _mint(to, amount);

        emit Staked(msg.sender, to, amount);
    }

    /// @dev Primary tokens sent to this contract outside staking would be stuck above the backing for good.
    function _checkPrimaryRecipient(address recipient) private view {
        if (recipient == address(0) || recipient == address(this)) revert StakedToken_InvalidRecipient(recipient);
    }

    function _pendingRedemptionOfCaller(uint256 id) private view returns (Redemption storage redemption) {
        redemption = _redemptions[id];
        if (redemption.status != RedemptionStatus.Pending) {
            revert StakedToken_RedemptionNotPending(id, redemption.status);
        }
        if (redemption.requester != msg.sender) revert StakedToken_NotRequester(id, msg.sender);
    }

    /// @dev A valid schedule pays something at every period (minRate > 0), rises by at least one rate unit
    /// per second, so the rate is strictly increasing in the period even after rounding, and stays below
    /// 100%.
    function _setRateSchedule(RateSchedule memory schedule) private {
        if (
            schedule.minPeriod >= schedule.maxPeriod || schedule.maxPeriod > MAX_UNLOCK_PERIOD_CAP
                || schedule.minRate == 0 || schedule.maxRate >= _RATE_ONE || schedule.minRate >= schedule.maxRate
                || schedule.maxRate - schedule.minRate < schedule.maxPeriod - schedule.minPeriod
        ) revert StakedToken_InvalidRateSchedule(schedule);

        RateSchedule memory oldSchedule = _rateSchedule;
        _rateSchedule = schedule;
        emit RateScheduleUpdated(oldSchedule, schedule);
    }

    function _setForfeitRecipient(address recipient) private {
        _checkPrimaryRecipient(recipient);
        address oldRecipient = forfeitRecipient;
        forfeitRecipient = recipient;
        emit ForfeitRecipientUpdated(oldRecipient, recipient);
    }
}
