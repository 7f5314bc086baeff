import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

import { verificationServices } from "./parts/verification-services.ts";
import TokensModule from "./Tokens.ts";

/**
 * The whole protocol on one chain: the tokens (module Tokens), the node licenses, the node registry and
 * the verification registry, wired together (see `verificationServices`). The deployer must be the
 * staked token's admin (module Tokens' `admin`, by default the deployer) to grant the roles; `admin`
 * here receives the reward pools' REWARDS_FUNDER_ROLE.
 */
export default buildModule("Protocol", (m) => {
  const { primary, staked } = m.useModule(TokensModule);
  const admin = m.getParameter("admin", m.getAccount(0));
  const services = verificationServices(m, primary, staked, admin);
  return { primary, staked, ...services };
});
