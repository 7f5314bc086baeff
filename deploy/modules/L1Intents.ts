import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

import { PERMIT2_ADDRESS } from "@avn/protocol/intents";
import { INTENT_L1_SETTLEMENT_WINDOW } from "./parts/defaults.ts";

/**
 * The L1 side of fast deposits (L1 → L2), deployed after the L2 because it names the L2's `DestinationSettler`
 * (`l2DestinationSettler`, no default), whose reports it is paid on: `L1OriginSettler` escrows ETH and the L1 primary
 * token (`l1PrimaryToken`) for orders paid out on the L2 (`l2ChainId`, `l2PrimaryToken`), and settles each order to
 * the filler the L2 settler reports through the OP messenger (`l1Messenger`, the L1CrossDomainMessenger proxy). Its
 * settlement window (`intentL1SettlementWindow`, seconds) must exceed the L2's challenge period: a report reaches L1
 * only after it (docs/intents.md). No admin.
 */
export default buildModule("L1Intents", (m) => {
  const originSettler = m.contract("L1OriginSettler", [
    {
      messenger: m.getParameter<string>("l1Messenger"),
      destinationSettler: m.getParameter<string>("l2DestinationSettler"),
      destinationChainId: m.getParameter<bigint>("l2ChainId"),
      inputToken: m.getParameter<string>("l1PrimaryToken"),
      outputToken: m.getParameter<string>("l2PrimaryToken"),
      permit2: m.getParameter("permit2", PERMIT2_ADDRESS),
      settlementWindow: m.getParameter("intentL1SettlementWindow", INTENT_L1_SETTLEMENT_WINDOW),
    },
  ]);
  return { originSettler };
});
