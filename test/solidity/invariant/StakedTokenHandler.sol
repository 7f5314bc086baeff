// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IStakedToken } from "../../../contracts/interfaces/IStakedToken.sol";
import { MockProtocolEscrow } from "../../../contracts/mocks/MockProtocolEscrow.sol";
import { PrimaryToken } from "../../../contracts/PrimaryToken.sol";
import { StakedToken } from "../../../contracts/StakedToken.sol";

import { bound } from "../utils/Bound.sol";
import { Vm, VM_ADDRESS } from "../utils/Vm.sol";

/// @notice Drives StakedToken through random sequences of every user, protocol and governance action,
/// with time warps, and keeps ghost records that the invariants compare against the contract's state.
/// Every action bounds its inputs and skips what cannot apply, so an unexpected revert is a finding.
contract StakedTokenHandler {
    Vm internal constant vm = Vm(VM_ADDRESS);

    PrimaryToken public immutable primary;
    StakedToken public immutable staked;
    MockProtocolEscrow public immutable escrow;
    address public immutable governance;

    address[] public actors;

    /// @dev Time only moves through `warp`; each action re-applies it so warps persist across calls.
    uint256 public currentTime;

    /// @dev The staked balance each actor must hold if staked tokens only ever moved through the protocol.
    mapping(address actor => uint256 balance) public expectedStakedBalance;
    /// @dev How many times each redemption id was completed or cancelled successfully.
    mapping(uint256 id => uint256 count) public finalizations;
    uint256[] public requestIds;
    /// @dev Set when a transfer between two ordinary accounts succeeds (it never should).
    bool public ordinaryTransferSucceeded;

    mapping(bytes32 action => uint256 count) public calls;

    modifier useTime() {
        vm.warp(currentTime);
        _;
    }

    constructor(PrimaryToken primary_, StakedToken staked_, MockProtocolEscrow escrow_, address governance_) {
        primary = primary_;
        staked = staked_;
        escrow = escrow_;
        governance = governance_;
        currentTime = block.timestamp;
        for (uint256 i = 1; i <= 4; ++i) {
            actors.push(address(uint160(0xAC7000 + i)));
        }
    }

    /// @dev Called once by the test after it funded this handler with primary tokens.
    function fundActors(uint256 amountEach) external {
        for (uint256 i = 0; i < actors.length; ++i) {
            primary.transfer(actors[i], amountEach);
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
    }

    function requestRedemption(uint256 actorSeed, uint256 amount, uint256 period) external useTime {
        address actor = _actor(actorSeed);
        amount = bound(amount, 0, staked.balanceOf(actor));
        period = bound(period, staked.minUnlockPeriod(), staked.maxUnlockPeriod());
        if (amount == 0 || staked.previewRedemption(amount, period) == 0) return;
        calls["requestRedemption"]++;
        vm.prank(actor);
        uint256 id = staked.requestRedemption(amount, period);
        requestIds.push(id);
        expectedStakedBalance[actor] -= amount;
    }

    /// @dev Tries any id ever issued, by any actor: only the first cancel or complete by the requester may pass.
    function cancelRedemption(uint256 actorSeed, uint256 idSeed) external useTime {
        if (requestIds.length == 0) return;
        calls["cancelRedemption"]++;
        address actor = _actor(actorSeed);
        uint256 id = requestIds[idSeed % requestIds.length];
        IStakedToken.Redemption memory redemption = staked.getRedemption(id);
        vm.prank(actor);
        try staked.cancelRedemption(id) {
            finalizations[id]++;
            expectedStakedBalance[actor] += redemption.stakedAmount;
        } catch {
            calls["cancelRedemption.rejected"]++;
        }
    }

    function completeRedemption(uint256 actorSeed, uint256 idSeed) external useTime {
        if (requestIds.length == 0) return;
        calls["completeRedemption"]++;
        address actor = _actor(actorSeed);
        uint256 id = requestIds[idSeed % requestIds.length];
        vm.prank(actor);
        try staked.completeRedemption(id) {
            finalizations[id]++;
        } catch {
            calls["completeRedemption.rejected"]++;
        }
    }

    /// @dev Every direct move between two ordinary accounts must fail, whatever the amount or allowance.
    function tryOrdinaryTransfer(uint256 fromSeed, uint256 toSeed, uint256 amount, bool useTransferFrom) external {
        calls["tryOrdinaryTransfer"]++;
        uint256 fromIndex = fromSeed % actors.length;
        address from = actors[fromIndex];
        address to = actors[(fromIndex + 1 + toSeed % (actors.length - 1)) % actors.length];
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
        try staked.approve(to, amount) {
            ordinaryTransferSucceeded = true;
        } catch { }
    }

    function depositToEscrow(uint256 actorSeed, uint256 amount) external useTime {
        address actor = _actor(actorSeed);
        amount = bound(amount, 0, staked.balanceOf(actor));
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
        escrow.burnForService(amount, _actor(recipientSeed));
    }

    /// @dev Governance changes the schedule mid-way; requests already made must keep their terms.
    function setRateSchedule(uint256 minPeriod, uint256 span, uint256 minRate) external useTime {
        calls["setRateSchedule"]++;
        minPeriod = bound(minPeriod, 0, 60 days);
        span = bound(span, 1 days, 365 days);
        minRate = bound(minRate, 0.01e18, 0.5e18);
        vm.prank(governance);
        staked.setRateSchedule(
            IStakedToken.RateSchedule({
                minPeriod: uint64(minPeriod),
                maxPeriod: uint64(minPeriod + span),
                minRate: uint64(minRate),
                maxRate: uint64(minRate + 0.45e18)
            })
        );
    }

    /*//////////////////////////////////////////////////////////////
                                HELPERS
    //////////////////////////////////////////////////////////////*/

    function _actor(uint256 seed) internal view returns (address) {
        return actors[seed % actors.length];
    }
}
