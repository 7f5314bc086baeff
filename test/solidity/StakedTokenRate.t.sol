// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";

import { bound } from "./utils/Bound.sol";
import { TokenFixture } from "./utils/Fixtures.sol";

/// @notice Fuzz tests of the redemption rate schedule: strictly rising, below 100%, rounded down, and a
/// schedule change never alters requests already made.
contract StakedTokenRateTest is TokenFixture {
    uint256 internal constant RATE_ONE = 1e18;

    address internal holder = address(0xA11CE);

    function setUp() public {
        _deployTokens(address(0xFEE));
    }

    /// @dev Turns four random words into a schedule that `setRateSchedule` accepts.
    function _validSchedule(
        uint256 minPeriod,
        uint256 span,
        uint256 minRate,
        uint256 rise
    ) internal view returns (IStakedToken.RateSchedule memory schedule) {
        minPeriod = bound(minPeriod, 0, staked.MAX_UNLOCK_PERIOD_CAP() - 1);
        span = bound(span, 1, staked.MAX_UNLOCK_PERIOD_CAP() - minPeriod);
        minRate = bound(minRate, 1, RATE_ONE - 1 - span);
        rise = bound(rise, span, RATE_ONE - 1 - minRate);
        schedule = IStakedToken.RateSchedule({
            minPeriod: uint64(minPeriod),
            maxPeriod: uint64(minPeriod + span),
            minRate: uint64(minRate),
            maxRate: uint64(minRate + rise)
        });
    }

    /// @dev Raw schedules, not pre-shaped ones: whatever `setRateSchedule` accepts must satisfy every rule,
    /// and whatever it refuses must break one.
    function testFuzz_SetRateSchedule_AcceptsExactlyTheValidOnes(
        uint64 minPeriod,
        uint64 maxPeriod,
        uint64 minRate,
        uint64 maxRate,
        uint256 period
    ) public {
        // Keep the inputs around the validity boundaries, so both branches are exercised: periods up to a
        // little past the cap, rates up to a little past 100%, or (on odd periods) rates of the same size
        // as the periods, where the one-unit-per-second slope rule bites.
        uint256 cap = staked.MAX_UNLOCK_PERIOD_CAP();
        minPeriod = uint64(bound(minPeriod, 0, cap + 10));
        maxPeriod = uint64(bound(maxPeriod, 0, cap + 10));
        uint256 rateCeiling = period % 2 == 0 ? RATE_ONE + 10 : 2 * uint256(maxPeriod) + 10;
        minRate = uint64(bound(minRate, 0, rateCeiling));
        maxRate = uint64(bound(maxRate, 0, rateCeiling));
        if (period % 3 == 2 && minPeriod < maxPeriod) {
            // Exactly on the slope rule's edge, or one unit short of it.
            maxRate = uint64(uint256(minRate) + (maxPeriod - minPeriod) - ((period >> 8) % 2));
        }
        IStakedToken.RateSchedule memory schedule = IStakedToken.RateSchedule(minPeriod, maxPeriod, minRate, maxRate);
        bool valid = minPeriod < maxPeriod && maxPeriod <= staked.MAX_UNLOCK_PERIOD_CAP() && minRate > 0
            && minRate < maxRate && maxRate < RATE_ONE && maxRate - minRate >= maxPeriod - minPeriod;
        try staked.setRateSchedule(schedule) {
            assertTrue(valid, "an invalid schedule was accepted");
            period = bound(period, minPeriod, maxPeriod - 1);
            assertLt(staked.redemptionRate(period), staked.redemptionRate(period + 1), "rate must rise every second");
            assertLt(staked.redemptionRate(maxPeriod), RATE_ONE, "rate reaches 100%");
            assertGt(staked.redemptionRate(minPeriod), 0, "rate is zero");
        } catch (bytes memory reason) {
            assertTrue(!valid, "a valid schedule was refused");
            assertEq(
                uint256(bytes32(reason)) >> 224,
                uint256(uint32(IStakedToken.StakedToken_InvalidRateSchedule.selector)),
                "refused with another error"
            );
        }
    }

    function testFuzz_RateStrictlyRisesWithPeriod(
        uint256 minPeriod,
        uint256 span,
        uint256 minRate,
        uint256 rise,
        uint256 shorter,
        uint256 longer
    ) public {
        IStakedToken.RateSchedule memory schedule = _validSchedule(minPeriod, span, minRate, rise);
        staked.setRateSchedule(schedule);
        longer = bound(longer, uint256(schedule.minPeriod) + 1, schedule.maxPeriod);
        shorter = bound(shorter, schedule.minPeriod, longer - 1);

        assertLt(staked.redemptionRate(shorter), staked.redemptionRate(longer), "rate must rise strictly");
        assertLt(staked.redemptionRate(longer - 1), staked.redemptionRate(longer), "neighbouring seconds");
    }

    function testFuzz_RateStaysWithinScheduleAndBelowOne(
        uint256 minPeriod,
        uint256 span,
        uint256 minRate,
        uint256 rise,
        uint256 period
    ) public {
        IStakedToken.RateSchedule memory schedule = _validSchedule(minPeriod, span, minRate, rise);
        staked.setRateSchedule(schedule);
        period = bound(period, schedule.minPeriod, schedule.maxPeriod);

        uint256 rate = staked.redemptionRate(period);
        assertGe(rate, schedule.minRate, "rate below the schedule's minimum");
        assertLe(rate, schedule.maxRate, "rate above the schedule's maximum");
        assertLt(rate, RATE_ONE, "rate reaches 100%");
        assertEq(staked.redemptionRate(schedule.minPeriod), schedule.minRate, "rate at min period");
        assertEq(staked.redemptionRate(schedule.maxPeriod), schedule.maxRate, "rate at max period");
    }

    /// @dev The payout never exceeds the exact (unrounded) linear value, and misses it by less than one unit
    /// of the staked amount's worth plus one base unit.
    function testFuzz_PayoutRoundsDown(
        uint256 amount,
        uint256 period,
        uint256 minPeriodSeed,
        uint256 spanSeed,
        uint256 minRateSeed,
        uint256 riseSeed
    ) public {
        staked.setRateSchedule(_validSchedule(minPeriodSeed, spanSeed, minRateSeed, riseSeed));
        amount = bound(amount, 1, primary.TOTAL_SUPPLY());
        period = bound(period, staked.minUnlockPeriod(), staked.maxUnlockPeriod());
        IStakedToken.RateSchedule memory s = staked.rateSchedule();
        uint256 span = s.maxPeriod - s.minPeriod;
        // Exact rational payout = amount * (minRate * span + (maxRate - minRate) * (period - minPeriod)) / (1e18 * span).
        uint256 exactNumerator = amount * (uint256(s.minRate) * span + (uint256(s.maxRate) - s.minRate) * (period - s.minPeriod));
        uint256 denominator = RATE_ONE * span;

        uint256 payout = staked.previewRedemption(amount, period);
        assertLe(payout * denominator, exactNumerator, "payout rounds in the requester's favour");
        assertLt(payout, amount, "payout reaches the staked amount");
        // floor(amount * floor(rate) / 1e18) is below the exact value by less than amount / 1e18 + 1 units.
        assertGt((payout + 1) * denominator + amount * span, exactNumerator, "payout rounds down too far");
    }

    function testFuzz_RevertWhen_PeriodOutOfRange(uint256 period) public {
        vm.assume(period < 15 days || period > 180 days);
        vm.expectRevert(
            abi.encodeWithSelector(IStakedToken.StakedToken_UnlockPeriodOutOfRange.selector, period, 15 days, 180 days)
        );
        staked.previewRedemption(1e18, period);
    }

    function testFuzz_ScheduleChangeKeepsRequestTerms(
        uint256 amount,
        uint256 period,
        uint256 minPeriod,
        uint256 span,
        uint256 minRate,
        uint256 rise
    ) public {
        amount = bound(amount, 100, 1e27);
        period = bound(period, 15 days, 180 days);
        primary.approve(address(staked), amount);
        staked.stakeFor(holder, amount);
        uint256 expectedPayout = staked.previewRedemption(amount, period);
        vm.prank(holder);
        uint256 id = staked.requestRedemption(amount, period);

        staked.setRateSchedule(_validSchedule(minPeriod, span, minRate, rise));
        vm.warp(block.timestamp + period);
        vm.prank(holder);
        staked.completeRedemption(id);

        assertEq(primary.balanceOf(holder), expectedPayout, "payout changed with the schedule");
        assertEq(primary.balanceOf(address(0xFEE)), amount - expectedPayout, "forfeit changed with the schedule");
    }
}
