// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";
import { MockProtocolEscrow } from "../../../contracts/mocks/MockProtocolEscrow.sol";

import { TokenFixture } from "../utils/Fixtures.sol";
import { StakedTokenHandler } from "./StakedTokenHandler.sol";

/// @notice Invariants of the staked token under random sequences of staking, redemptions, cancellations,
/// completions, escrow deposits and withdrawals, service burns, transfer attempts, schedule changes and
/// time warps (see StakedTokenHandler).
contract StakedTokenInvariantTest is TokenFixture {
    MockProtocolEscrow internal escrow;
    StakedTokenHandler internal handler;

    function setUp() public {
        _deployTokens(address(0xFEE1));
        escrow = new MockProtocolEscrow(staked);
        staked.grantRole(staked.PROTOCOL_ROLE(), address(escrow));
        handler = new StakedTokenHandler(primary, staked, escrow, address(this), 1_000_000e18);
        primary.transfer(address(handler), 5_000_000e18);
        handler.fundActors();

        bytes4[] memory selectors = new bytes4[](12);
        selectors[0] = StakedTokenHandler.warp.selector;
        selectors[1] = StakedTokenHandler.stake.selector;
        selectors[2] = StakedTokenHandler.requestRedemption.selector;
        selectors[3] = StakedTokenHandler.cancelRedemption.selector;
        selectors[4] = StakedTokenHandler.completeRedemption.selector;
        selectors[5] = StakedTokenHandler.tryOrdinaryTransfer.selector;
        selectors[6] = StakedTokenHandler.depositToEscrow.selector;
        selectors[7] = StakedTokenHandler.withdrawFromEscrow.selector;
        selectors[8] = StakedTokenHandler.burnForService.selector;
        selectors[9] = StakedTokenHandler.donate.selector;
        selectors[10] = StakedTokenHandler.setRateSchedule.selector;
        selectors[11] = StakedTokenHandler.setForfeitRecipient.selector;
        targetContract(address(handler));
        targetSelector(FuzzSelector({ addr: address(handler), selectors: selectors }));
    }

    /// @custom:invariant The primary tokens held are exactly the staked supply, plus the staked amounts
    /// pending redemption, plus donations: never less (under-backed), never more (value stuck or skimmed).
    function invariant_FullyBacked() public view {
        assertEq(
            primary.balanceOf(address(staked)),
            staked.totalSupply() + staked.totalPendingRedemptions() + handler.donations(),
            "backing differs from supply + pending + donations"
        );
    }

    /// @custom:invariant No staked token ever moves between two ordinary accounts.
    function invariant_NoTransferBetweenOrdinaryAccounts() public view {
        assertTrue(!handler.ordinaryTransferSucceeded(), "a transfer between ordinary accounts succeeded");
        for (uint256 i = 0; i < handler.actorCount(); ++i) {
            address actor = handler.actors(i);
            assertEq(staked.balanceOf(actor), handler.expectedStakedBalance(actor), "actor staked balance drifted");
        }
    }

    /// @custom:invariant A redemption request is completed or cancelled at most once, and only by its requester.
    function invariant_RequestFinalizedAtMostOnce() public view {
        assertTrue(!handler.unexpectedSuccess(), "the token accepted a cancel or complete it must refuse");
        for (uint256 i = 0; i < handler.requestCount(); ++i) {
            uint256 id = handler.requestIds(i);
            assertLe(handler.finalizations(id), 1, "request finalized twice");
            bool pending = staked.getRedemption(id).status == IStakedToken.RedemptionStatus.Pending;
            assertEq(pending ? 0 : 1, handler.finalizations(id), "status disagrees with the finalizations seen");
        }
        assertEq(handler.pendingAmount(), staked.totalPendingRedemptions(), "pending total differs from the requests made");
    }

    /// @custom:invariant Every primary token paid out is what the request's terms (or a service burn) promised.
    function invariant_PayoutsMatchTerms() public view {
        for (uint256 i = 0; i < handler.actorCount(); ++i) {
            address actor = handler.actors(i);
            assertEq(
                primary.balanceOf(actor),
                handler.initialFunding() + handler.primaryReceived(actor) - handler.primarySpent(actor),
                "actor primary balance differs from stakes and payouts"
            );
        }
        for (uint256 i = 0; i < 2; ++i) {
            address recipient = handler.forfeitRecipients(i);
            assertEq(primary.balanceOf(recipient), handler.forfeited(recipient), "forfeited backing misrouted");
        }
    }

    /// @custom:invariant The primary token's total supply never changes (no path mints or burns it).
    function invariant_PrimarySupplyConstant() public view {
        assertEq(primary.totalSupply(), primary.TOTAL_SUPPLY(), "primary supply changed");
    }
}
