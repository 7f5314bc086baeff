// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";
import { MockProtocolEscrow } from "../../../contracts/mocks/MockProtocolEscrow.sol";
import { PrimaryToken } from "../../../contracts/PrimaryToken.sol";
import { StakedToken } from "../../../contracts/StakedToken.sol";

import { bound } from "../utils/Bound.sol";
import { Vm, VM_ADDRESS } from "../utils/Vm.sol";

/// @notice Drives StakedToken through random sequences of every user, protocol and governance action,
/// with time warps. The handler keeps its own records (ghosts), computed from what it asked for and from
/// the schedule it set, never read back from the token, so that the invariants compare the token
/// against an independent model. Each action works out whether the token must accept it: an expected
/// success is called directly (a revert fails the run), an expected refusal is tried and must revert.
contract StakedTokenHandler {
    struct Request {
        address requester;
        uint256 amount;
        uint256 payout;
        uint256 unlockTime;
        bool finalized;
    }

    Vm internal constant vm = Vm(VM_ADDRESS);
    uint256 internal constant RATE_ONE = 1e18;

    PrimaryToken public immutable primary;
    StakedToken public immutable staked;
    MockProtocolEscrow public immutable escrow;
    address public immutable governance;
    uint256 public immutable initialFunding;

    address[] public actors;
    address[2] public forfeitRecipients = [address(0xFEE1), address(0xFEE2)];
    address public currentForfeitRecipient;
    IStakedToken.RateSchedule public schedule;

    /// @dev Time only moves through `warp`; each action re-applies it so warps persist across calls.
    uint256 public currentTime;

    mapping(address actor => uint256 balance) public expectedStakedBalance;
    mapping(address actor => uint256 amount) public primarySpent;
    mapping(address actor => uint256 amount) public primaryReceived;
    mapping(address recipient => uint256 amount) public forfeited;
    uint256 public donations;
    uint256 public pendingAmount;

    uint256[] public requestIds;
    mapping(uint256 id => Request request) public requests;
    mapping(uint256 id => uint256 count) public finalizations;

    /// @dev Set when the token accepts something it must refuse.
    bool public unexpectedSuccess;
    /// @dev Set when a transfer between two ordinary accounts succeeds.
    bool public ordinaryTransferSucceeded;

    mapping(bytes32 action => uint256 count) public calls;

    modifier useTime() {
        vm.warp(currentTime);
        _;
    }

    constructor(
        PrimaryToken primary_,
        StakedToken staked_,
        MockProtocolEscrow escrow_,
        address governance_,
        uint256 initialFunding_
    ) {
        primary = primary_;
        staked = staked_;
        escrow = escrow_;
        governance = governance_;
        initialFunding = initialFunding_;
        currentTime = block.timestamp;
        currentForfeitRecipient = staked_.forfeitRecipient();
        schedule = staked_.rateSchedule();
        for (uint256 i = 1; i <= 4; ++i) {
            actors.push(address(uint160(0xAC7000 + i)));
        }
    }

    /// @dev Called once by the test after it funded this handler with primary tokens.
    function fundActors() external {
        for (uint256 i = 0; i < actors.length; ++i) {
            primary.transfer(actors[i], initialFunding);
            vm.prank(actors[i]);
            primary.approve(address(staked), type(uint256).max);
            vm.prank(actors[i]);
            staked.approve(address(escrow), type(uint256).max);
        }
    }

    function requestCount() external view returns (uint256) {
        return requestIds.length;
    }

    function actorCount() external view returns (uint256) {
        return actors.length;
    }

    /*//////////////////////////////////////////////////////////////
                                ACTIONS
    //////////////////////////////////////////////////////////////*/

    function warp(uint256 seconds_) external {
        calls["warp"]++;
        currentTime += bound(seconds_, 0, 200 days);
        vm.warp(currentTime);
    }

    function stake(uint256 actorSeed, uint256 beneficiarySeed, uint256 amount) external useTime {
        address actor = _actor(actorSeed);
        address beneficiary = _actor(beneficiarySeed);
        amount = bound(amount, 0, primary.balanceOf(actor));
        if (amount == 0) return;
        calls["stake"]++;
        vm.prank(actor);
        staked.stakeFor(beneficiary, amount);
        expectedStakedBalance[beneficiary] += amount;
        primarySpent[actor] += amount;
    }

    function requestRedemption(uint256 actorSeed, uint256 amount, uint256 period) external useTime {
        address actor = _actor(actorSeed);
        amount = bound(amount, 0, expectedStakedBalance[actor]);
        period = bound(period, schedule.minPeriod, schedule.maxPeriod);
        uint256 payout = amount * _rate(period) / RATE_ONE;
        if (payout == 0) return; // also covers amount == 0
        calls["requestRedemption"]++;
        vm.prank(actor);
        uint256 id = staked.requestRedemption(amount, period);
        requestIds.push(id);
        requests[id] = Request({
            requester: actor,
            amount: amount,
            payout: payout,
            unlockTime: currentTime + period,
            finalized: false
        });
        expectedStakedBalance[actor] -= amount;
        pendingAmount += amount;
    }

    /// @dev Tries any id ever issued, by the requester or by someone else.
    function cancelRedemption(uint256 idSeed, uint256 actorSeed, bool asRequester) external useTime {
        if (requestIds.length == 0) return;
        uint256 id = requestIds[idSeed % requestIds.length];
        Request storage request = requests[id];
        address caller = asRequester ? request.requester : _actor(actorSeed);
        if (caller != request.requester || request.finalized) {
            calls["cancelRedemption.refused"]++;
            vm.prank(caller);
            try staked.cancelRedemption(id) {
                unexpectedSuccess = true;
            } catch { }
            return;
        }
        calls["cancelRedemption"]++;
        uint256 before = staked.balanceOf(caller);
        vm.prank(caller);
        staked.cancelRedemption(id);
        if (staked.balanceOf(caller) != before + request.amount) unexpectedSuccess = true;
        request.finalized = true;
        finalizations[id]++;
        expectedStakedBalance[caller] += request.amount;
        pendingAmount -= request.amount;
    }

    function completeRedemption(uint256 idSeed, uint256 actorSeed, bool asRequester) external useTime {
        if (requestIds.length == 0) return;
        uint256 id = requestIds[idSeed % requestIds.length];
        Request storage request = requests[id];
        address caller = asRequester ? request.requester : _actor(actorSeed);
        if (caller != request.requester || request.finalized || currentTime < request.unlockTime) {
            calls["completeRedemption.refused"]++;
            vm.prank(caller);
            try staked.completeRedemption(id) {
                unexpectedSuccess = true;
            } catch { }
            return;
        }
        calls["completeRedemption"]++;
        vm.prank(caller);
        staked.completeRedemption(id);
        request.finalized = true;
        finalizations[id]++;
        primaryReceived[caller] += request.payout;
        forfeited[currentForfeitRecipient] += request.amount - request.payout;
        pendingAmount -= request.amount;
    }

    /// @dev Every direct move between two ordinary accounts must fail, whatever the amount (zero included),
    /// the allowance, or whether sender and receiver are the same account.
    function tryOrdinaryTransfer(uint256 fromSeed, uint256 toSeed, uint256 amount, bool useTransferFrom) external {
        calls["tryOrdinaryTransfer"]++;
        address from = _actor(fromSeed);
        address to = _actor(toSeed);
        amount = bound(amount, 0, staked.balanceOf(from));
        if (useTransferFrom) {
            vm.prank(to);
            try staked.transferFrom(from, to, amount) {
                ordinaryTransferSucceeded = true;
            } catch { }
        } else {
            vm.prank(from);
            try staked.transfer(to, amount) {
                ordinaryTransferSucceeded = true;
            } catch { }
        }
        vm.prank(from);
        try staked.approve(to, amount + 1) {
            ordinaryTransferSucceeded = true;
        } catch { }
    }

    function depositToEscrow(uint256 actorSeed, uint256 amount) external useTime {
        address actor = _actor(actorSeed);
        amount = bound(amount, 0, expectedStakedBalance[actor]);
        if (amount == 0) return;
        calls["depositToEscrow"]++;
        vm.prank(actor);
        escrow.deposit(amount);
        expectedStakedBalance[actor] -= amount;
    }

    function withdrawFromEscrow(uint256 actorSeed, uint256 amount) external useTime {
        address actor = _actor(actorSeed);
        amount = bound(amount, 0, staked.balanceOf(address(escrow)));
        if (amount == 0) return;
        calls["withdrawFromEscrow"]++;
        escrow.withdraw(actor, amount);
        expectedStakedBalance[actor] += amount;
    }

    function burnForService(uint256 amount, uint256 recipientSeed) external useTime {
        amount = bound(amount, 0, staked.balanceOf(address(escrow)));
        if (amount == 0) return;
        calls["burnForService"]++;
        address recipient = _actor(recipientSeed);
        escrow.burnForService(amount, recipient);
        primaryReceived[recipient] += amount;
    }

    /// @dev Primary tokens sent straight to the token raise its holdings above the backing it owes.
    function donate(uint256 amount) external {
        amount = bound(amount, 0, primary.balanceOf(address(this)));
        if (amount == 0) return;
        calls["donate"]++;
        primary.transfer(address(staked), amount);
        donations += amount;
    }

    /// @dev Governance changes the schedule mid-way; requests already made must keep their terms.
    function setRateSchedule(uint256 minPeriod, uint256 span, uint256 minRate, uint256 rise) external useTime {
        calls["setRateSchedule"]++;
        minPeriod = bound(minPeriod, 0, 60 days);
        span = bound(span, 1 days, 365 days);
        minRate = bound(minRate, 0.01e18, 0.5e18);
        rise = bound(rise, span, RATE_ONE - 1 - minRate);
        schedule = IStakedToken.RateSchedule({
            minPeriod: uint64(minPeriod),
            maxPeriod: uint64(minPeriod + span),
            minRate: uint64(minRate),
            maxRate: uint64(minRate + rise)
        });
        vm.prank(governance);
        staked.setRateSchedule(schedule);
    }

    function setForfeitRecipient(uint256 seed) external {
        calls["setForfeitRecipient"]++;
        currentForfeitRecipient = forfeitRecipients[seed % 2];
        vm.prank(governance);
        staked.setForfeitRecipient(currentForfeitRecipient);
    }

    /*//////////////////////////////////////////////////////////////
                                HELPERS
    //////////////////////////////////////////////////////////////*/

    /// @dev The schedule's rate for `period`, rounded down, computed here from the handler's own schedule.
    function _rate(uint256 period) internal view returns (uint256) {
        IStakedToken.RateSchedule memory s = schedule;
        return s.minRate + (uint256(s.maxRate) - s.minRate) * (period - s.minPeriod) / (s.maxPeriod - s.minPeriod);
    }

    function _actor(uint256 seed) internal view returns (address) {
        return actors[seed % actors.length];
    }
}
