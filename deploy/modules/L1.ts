import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

/**
 * The L1 side: the primary token, canonical on L1, its whole fixed supply minted once to
 * `supplyRecipient` (a parameter with no default: a live deployment must name its treasury).
 */
export default buildModule("L1", (m) => {
  const primary = m.contract("PrimaryToken", [
    m.getParameter("primaryName", "Verification Network"),
    m.getParameter("primarySymbol", "VNT"),
    m.getParameter<string>("supplyRecipient"),
  ]);
  return { primary };
});
