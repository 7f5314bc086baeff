import { expect } from "chai";
import { network } from "hardhat";

import TokensModule from "../../../deploy/modules/Tokens.ts";
import { DAY, DEFAULT_SCHEDULE, RATE_ONE, TOTAL_SUPPLY } from "../../helpers/tokens.ts";

const { ethers, ignition } = await network.create();

describe("Ignition module Tokens", function () {
  it("deploys both tokens wired together with the default parameters", async function () {
    const [deployer] = await ethers.getSigners();
    const { primary, staked } = await ignition.deploy(TokensModule);
    expect(await primary.balanceOf(deployer.address)).to.equal(TOTAL_SUPPLY);
    expect(await staked.PRIMARY_TOKEN()).to.equal(await primary.getAddress());
    expect(await staked.defaultAdmin()).to.equal(deployer.address);
    expect(await staked.rateSchedule()).to.deep.equal(Object.values(DEFAULT_SCHEDULE));
    // DEFAULT_SCHEDULE is the module's own default (deploy/modules/parts/defaults.ts); the values
    // are pinned here independently of it.
    expect(await staked.rateSchedule()).to.deep.equal([15n * DAY, 180n * DAY, RATE_ONE / 4n, (95n * RATE_ONE) / 100n]);
  });

  it("takes the admin, supply recipient and schedule from parameters", async function () {
    const [, admin, treasury] = await ethers.getSigners();
    const { primary, staked } = await ignition.deploy(TokensModule, {
      parameters: {
        Tokens: {
          admin: admin.address,
          supplyRecipient: treasury.address,
          forfeitRecipient: treasury.address,
          minUnlockPeriod: 7n * DAY,
          maxUnlockPeriod: 30n * DAY,
        },
      },
    });
    expect(await primary.balanceOf(treasury.address)).to.equal(TOTAL_SUPPLY);
    expect(await staked.defaultAdmin()).to.equal(admin.address);
    expect(await staked.forfeitRecipient()).to.equal(treasury.address);
    expect(await staked.minUnlockPeriod()).to.equal(7n * DAY);
    expect(await staked.maxUnlockPeriod()).to.equal(30n * DAY);
  });
});
