import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

import { PRIMARY_NAME, PRIMARY_SYMBOL } from "./parts/defaults.ts";
import { stakedTokenFuture } from "./parts/staked-token.ts";

/**
 * The primary token and the staked token on one chain (the in-process network, a local chain). On the
 * two-chain deployment the same staked token is backed by the OP-bridged primary token (module L2).
 * Every parameter defaults to a local-development value.
 */
export default buildModule("Tokens", (m) => {
  const deployer = m.getAccount(0);
  const primary = m.contract("PrimaryToken", [
    m.getParameter("primaryName", PRIMARY_NAME),
    m.getParameter("primarySymbol", PRIMARY_SYMBOL),
    m.getParameter("supplyRecipient", deployer),
  ]);
  const staked = stakedTokenFuture(m, primary, m.getParameter("admin", deployer));
  return { primary, staked };
});
