import type { HardhatEthers } from "@nomicfoundation/hardhat-ethers/types";

import { DEFAULT_RATE_SCHEDULE, deployTokenPair } from "../../src/deploy/contracts.js";
import { DAY } from "../../src/common/units.js";
export { DAY };

export const RATE_ONE = 10n ** 18n;
export const TOTAL_SUPPLY = 1_000_000_000n * 10n ** 18n;

/** The default redemption schedule of the issue: 15 days → 25%, 180 days → 95%, linear between. */
export const DEFAULT_SCHEDULE = DEFAULT_RATE_SCHEDULE;

export type Schedule = { minPeriod: bigint; maxPeriod: bigint; minRate: bigint; maxRate: bigint };

/** The expected rate for `period` under `schedule`, computed independently of the contract. */
export function expectedRate(schedule: Schedule, period: bigint): bigint {
  return (
    schedule.minRate +
    ((schedule.maxRate - schedule.minRate) * (period - schedule.minPeriod)) /
      (schedule.maxPeriod - schedule.minPeriod)
  );
}

/**
 * Deploys the primary token (whole supply to `treasury`) and the staked token governed by `admin`, with
 * forfeited redemption backing going to `rewardsPool`, plus a mock protocol escrow allowlisted by admin.
 */
export async function deployTokens(ethers: HardhatEthers) {
  const [admin, treasury, rewardsPool, alice, bob, carol] = await ethers.getSigners();
  const { primary, staked } = await deployTokenPair(ethers, {
    supplyRecipient: treasury.address,
    admin: admin.address,
    forfeitRecipient: rewardsPool.address,
    adminTransferDelay: 3n * DAY,
  });
  const escrow = await ethers.deployContract("MockProtocolEscrow", [await staked.getAddress()]);
  await staked.connect(admin).grantRole(await staked.PROTOCOL_ROLE(), await escrow.getAddress());

  // Alice and Bob get primary tokens and approve the staked token for them.
  const funding = 1_000_000n * 10n ** 18n;
  for (const holder of [alice, bob]) {
    await primary.connect(treasury).transfer(holder.address, funding);
    await primary.connect(holder).approve(await staked.getAddress(), funding);
  }
  return { primary, staked, escrow, admin, treasury, rewardsPool, alice, bob, carol, funding };
}
