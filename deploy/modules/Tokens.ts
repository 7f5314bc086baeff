import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

const DAY = 24n * 60n * 60n;
const RATE_ONE = 10n ** 18n;

/**
 * The primary token and the staked token on one chain (the in-process network, a local chain). The
 * two-chain deployment, with the staked token backed by the OP-bridged primary token, builds on the
 * same contracts. Every parameter defaults to a local-development value; live networks set them in
 * `deploy/parameters/<network>.json`.
 */
export default buildModule("Tokens", (m) => {
  const deployer = m.getAccount(0);
  const admin = m.getParameter("admin", deployer);

  const primary = m.contract("PrimaryToken", [
    m.getParameter("primaryName", "Verification Network"),
    m.getParameter("primarySymbol", "VNT"),
    m.getParameter("supplyRecipient", deployer),
  ]);

  const staked = m.contract("StakedToken", [
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

  return { primary, staked };
});
