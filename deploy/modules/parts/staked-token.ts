import type { IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";

import { ADMIN_TRANSFER_DELAY, DEFAULT_RATE_SCHEDULE, STAKED_NAME, STAKED_SYMBOL } from "./defaults.ts";
import type { AdminArgument, TokenFuture } from "./types.ts";

/**
 * The staked token backed by `primary`, with its redemption schedule and forfeit recipient from the
 * module's parameters (by default the schedule, `DEFAULT_RATE_SCHEDULE`: 15 days → 25%, 180 days → 95%).
 */
export function stakedTokenFuture(m: IgnitionModuleBuilder, primary: TokenFuture, admin: AdminArgument) {
  const deployer = m.getAccount(0);
  return m.contract("StakedToken", [
    m.getParameter("stakedName", STAKED_NAME),
    m.getParameter("stakedSymbol", STAKED_SYMBOL),
    primary,
    admin,
    m.getParameter("adminTransferDelay", ADMIN_TRANSFER_DELAY),
    {
      minPeriod: m.getParameter("minUnlockPeriod", DEFAULT_RATE_SCHEDULE.minPeriod),
      maxPeriod: m.getParameter("maxUnlockPeriod", DEFAULT_RATE_SCHEDULE.maxPeriod),
      minRate: m.getParameter("minRedemptionRate", DEFAULT_RATE_SCHEDULE.minRate),
      maxRate: m.getParameter("maxRedemptionRate", DEFAULT_RATE_SCHEDULE.maxRate),
    },
    m.getParameter("forfeitRecipient", deployer),
  ]);
}
