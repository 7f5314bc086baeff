// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IStakedToken } from "../../../contracts/interfaces/IStakedToken.sol";
import { MockProtocolEscrow } from "../../../contracts/mocks/MockProtocolEscrow.sol";
import { PrimaryToken } from "../../../contracts/PrimaryToken.sol";
import { StakedToken } from "../../../contracts/StakedToken.sol";

import { Test } from "../utils/Test.sol";
import { StakedTokenHandler } from "./StakedTokenHandler.sol";

/// @notice Invariants of the staked token under random sequences of staking, redemptions, cancellations,
/// completions, escrow deposits and withdrawals, service burns, transfer attempts, schedule changes and
/// time warps (see StakedTokenHandler).
contract StakedTokenInvariantTest is Test {
    PrimaryToken internal primary;
    StakedToken internal staked;
    MockProtocolEscrow internal escrow;
    StakedTokenHandler internal handler;

    function setUp() public {
        primary = new PrimaryToken("Primary", "PRI", address(this));
        staked = new StakedToken(
            "Staked",
            "sPRI",
            primary,
            address(this),
            0,
            IStakedToken.RateSchedule({
                minPeriod: 15 days,
                maxPeriod: 180 days,
                minRate: 0.25e18,
                maxRate: 0.95e18
            }),
            address(0xFEE)
        );
        escrow = new MockProtocolEscrow(staked);
        staked.grantRole(staked.PROTOCOL_ROLE(), address(escrow));
        handler = new StakedTokenHandler(primary, staked, escrow, address(this));
        primary.transfer(address(handler), 4_000_000e18);
        handler.fundActors(1_000_000e18);

        bytes4[] memory selectors = new bytes4[](10);
        selectors[0] = StakedTokenHandler.warp.selector;
        selectors[1] = StakedTokenHandler.stake.selector;
        selectors[2] = StakedTokenHandler.requestRedemption.selector;
        selectors[3] = StakedTokenHandler.cancelRedemption.selector;
        selectors[4] = StakedTokenHandler.completeRedemption.selector;
        selectors[5] = StakedTokenHandler.tryOrdinaryTransfer.selector;
        selectors[6] = StakedTokenHandler.depositToEscrow.selector;
        selectors[7] = StakedTokenHandler.withdrawFromEscrow.selector;
        selectors[8] = StakedTokenHandler.burnForService.selector;
        selectors[9] = StakedTokenHandler.setRateSchedule.selector;
        targetContract(address(handler));
        targetSelector(FuzzSelector({ addr: address(handler), selectors: selectors }));
    }

    /// @custom:invariant The primary tokens held cover the staked supply plus the staked amounts pending redemption.
    function invariant_FullyBacked() public view {
        assertGe(
            primary.balanceOf(address(staked)),
            staked.totalSupply() + staked.totalPendingRedemptions(),
            "staked token under-backed"
        );
    }

    /// @custom:invariant No staked token ever moves between two ordinary accounts.
    function invariant_NoTransferBetweenOrdinaryAccounts() public view {
        assertTrue(!handler.ordinaryTransferSucceeded(), "a transfer between ordinary accounts succeeded");
        for (uint256 i = 0; i < handler.actorCount(); ++i) {
            address actor = handler.actors(i);
            assertEq(staked.balanceOf(actor), handler.expectedStakedBalance(actor), "actor balance drifted");
        }
    }

    /// @custom:invariant A redemption request is completed or cancelled at most once.
    function invariant_RequestFinalizedAtMostOnce() public view {
        uint256 pendingSum;
        for (uint256 i = 0; i < handler.requestCount(); ++i) {
            uint256 id = handler.requestIds(i);
            assertLe(handler.finalizations(id), 1, "request finalized twice");
            IStakedToken.Redemption memory redemption = staked.getRedemption(id);
            if (redemption.status == IStakedToken.RedemptionStatus.Pending) {
                assertEq(handler.finalizations(id), 0, "pending request was finalized");
                pendingSum += redemption.stakedAmount;
            } else {
                assertEq(handler.finalizations(id), 1, "finalized request not counted");
            }
        }
        assertEq(pendingSum, staked.totalPendingRedemptions(), "pending total differs from pending requests");
    }

    /// @custom:invariant The primary token's total supply never changes.
    function invariant_PrimarySupplyConstant() public view {
        assertEq(primary.totalSupply(), primary.TOTAL_SUPPLY(), "primary supply changed");
    }
}
