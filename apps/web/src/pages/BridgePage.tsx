import { useConnection } from "wagmi";

import { ChainNotice } from "../components/ChainNotice";
import { BridgeForm } from "./bridge/BridgeForm";
import { Withdrawals } from "./bridge/Withdrawals";

/**
 * The standard bridge between L1 and L2: deposits arrive on L2 by themselves; withdrawals need a proof and,
 * after the challenge period, a finalization on L1, which the list of the account's withdrawals offers.
 */
export default function BridgePage() {
  const { address } = useConnection();
  return (
    <section>
      <h1>Bridge</h1>
      <ChainNotice expected="either" />
      <BridgeForm account={address} />
      {address === undefined ? (
        <p className="hint">Connect a wallet to bridge and to see your withdrawals.</p>
      ) : (
        <Withdrawals key={address} account={address} />
      )}
    </section>
  );
}
