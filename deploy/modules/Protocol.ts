import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

import TokensModule from "./Tokens.js";

const DAY = 24n * 60n * 60n;
const E18 = 10n ** 18n;

/**
 * The whole protocol on one chain: the tokens (module Tokens), the node licenses, the node registry and
 * the verification registry, wired together. The verification registry gets the staked token's
 * PROTOCOL_ROLE (collateral escrow, fee burns) and the node registry's RECORDER_ROLE (vote statistics);
 * the admin gets REWARDS_FUNDER_ROLE. Role grants are made by the deployer, so the deployer must be the
 * admin of the contracts here (live deployments hand the admin role to governance afterwards with the
 * two-step transfer).
 */
export default buildModule("Protocol", (m) => {
  const { primary, staked } = m.useModule(TokensModule);
  const deployer = m.getAccount(0);
  const admin = m.getParameter("admin", deployer);
  const adminTransferDelay = m.getParameter("adminTransferDelay", 3n * DAY);

  const license = m.contract("NodeLicense", [
    m.getParameter("licenseName", "Verification Node License"),
    m.getParameter("licenseSymbol", "VNODE"),
    primary,
    m.getParameter("treasury", deployer),
    m.getParameter("licenseMaxSupply", 50_000n),
    m.getParameter("licensePriceTiers", [
      { upToSupply: 1_000n, price: 1_000n * E18 },
      { upToSupply: 10_000n, price: 2_000n * E18 },
      { upToSupply: 50_000n, price: 5_000n * E18 },
    ]),
    admin,
    adminTransferDelay,
  ]);

  const nodeRegistry = m.contract("NodeRegistry", [
    license,
    m.getParameter("livenessWindow", 10n * 60n),
    admin,
    adminTransferDelay,
  ]);

  const verificationRegistry = m.contract("VerificationRegistry", [
    staked,
    nodeRegistry,
    m.getParameter("epochDuration", 7n * DAY),
    m.getParameter("requestFee", 10n * E18),
    m.getParameter("quorum", 2n),
    m.getParameter("jobTimeout", 60n * 60n),
    admin,
    adminTransferDelay,
  ]);

  const protocolRole = m.staticCall(staked, "PROTOCOL_ROLE");
  m.call(staked, "grantRole", [protocolRole, verificationRegistry], { id: "StakedToken_grantProtocolRole" });
  const recorderRole = m.staticCall(nodeRegistry, "RECORDER_ROLE");
  m.call(nodeRegistry, "grantRole", [recorderRole, verificationRegistry], { id: "NodeRegistry_grantRecorderRole" });
  const funderRole = m.staticCall(verificationRegistry, "REWARDS_FUNDER_ROLE");
  m.call(verificationRegistry, "grantRole", [funderRole, admin], { id: "VerificationRegistry_grantFunderRole" });

  return { primary, staked, license, nodeRegistry, verificationRegistry };
});
