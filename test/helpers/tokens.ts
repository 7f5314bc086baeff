import { DEFAULT_RATE_SCHEDULE, RATE_ONE } from "../../deploy/modules/parts/defaults.ts";
import { deployTokenPair, type DeployTarget } from "../../src/deploy/contracts.ts";
import { DAY } from "@avn/protocol/units";
export { DAY, RATE_ONE };

export const TOTAL_SUPPLY = 1_000_000_000n * 10n ** 18n;

/** The modules' default redemption schedule (the issue's: 15 days → 25%, 180 days → 95%, linear between). */
export const DEFAULT_SCHEDULE = DEFAULT_RATE_SCHEDULE;

export type Schedule = { minPeriod: bigint; maxPeriod: bigint; minRate: bigint; maxRate: bigint };

/** The expected rate for `period` under `schedule`, computed independently of the contract. */
export function expectedRate(schedule: Schedule, period: bigint): bigint {
  return (
    schedule.minRate + ((schedule.maxRate - schedule.minRate) * (period - schedule.minPeriod)) / (schedule.maxPeriod - schedule.minPeriod)
  );
}

/**
 * Deploys the primary token (whole supply to `treasury`) and the staked token governed by `admin`, with
 * forfeited redemption backing going to `rewardsPool` (module Tokens, otherwise with its defaults), plus
 * a mock protocol escrow allowlisted by admin. `target` is a connection's `ethers` (or the connection).
 */
export async function deployTokens(target: DeployTarget) {
  const ethers = "ignition" in target ? target.ethers : target;
  const [admin, treasury, rewardsPool, alice, bob, carol] = await ethers.getSigners();
  const { primary, staked } = await deployTokenPair(target, {
    supplyRecipient: treasury.address,
    admin: admin.address,
    forfeitRecipient: rewardsPool.address,
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
