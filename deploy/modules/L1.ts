import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

import { PRIMARY_NAME, PRIMARY_SYMBOL } from "./parts/defaults.ts";
import { l1Governance } from "./parts/governance.ts";

/**
 * The L1 side: the primary token, canonical on L1, its whole fixed supply minted once to
 * `supplyRecipient` (a parameter with no default: a live deployment must name its treasury), and the
 * governance of the protocol by its votes (`l1Governance`: the governor and its timelock;
 * `proposalGuardian`, the security council that can cancel a proposal, has no default either), and the
 * intent layer's `DestinationSettler`, where fillers pay the L2's fast withdrawals and which the L2 proves
 * (docs/intents.md; no admin, no parameter).
 */
export default buildModule("L1", (m) => {
  const primary = m.contract("PrimaryToken", [
    m.getParameter("primaryName", PRIMARY_NAME),
    m.getParameter("primarySymbol", PRIMARY_SYMBOL),
    m.getParameter<string>("supplyRecipient"),
  ]);
  const { governor, timelock } = l1Governance(m, primary);
  const destinationSettler = m.contract("DestinationSettler", []);
  return { primary, governor, timelock, destinationSettler };
});
