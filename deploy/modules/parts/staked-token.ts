import type { IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";

import type { AdminArgument, TokenFuture } from "./types.js";

const DAY = 24n * 60n * 60n;
const RATE_ONE = 10n ** 18n;

/**
 * The staked token backed by `primary`, with its redemption schedule and forfeit recipient from the
 * module's parameters (local-development defaults: 15 days → 25%, 180 days → 95%).
 */
export function stakedTokenFuture(m: IgnitionModuleBuilder, primary: TokenFuture, admin: AdminArgument) {
  const deployer = m.getAccount(0);
  return m.contract("StakedToken", [
    m.getParameter("stakedName", "Staked Verification Network"),
    m.getParameter("stakedSymbol", "sVNT"),
    primary,
    admin,
    m.getParameter("adminTransferDelay", 3n * DAY),
    {
      minPeriod: m.getParameter("minUnlockPeriod", 15n * DAY),
      maxPeriod: m.getParameter("maxUnlockPeriod", 180n * DAY),
      minRate: m.getParameter("minRedemptionRate", RATE_ONE / 4n),
      maxRate: m.getParameter("maxRedemptionRate", (95n * RATE_ONE) / 100n),
    },
    m.getParameter("forfeitRecipient", deployer),
  ]);
}
