import { useConnection } from "wagmi";

import { useAppSettings } from "../app-context";
import { ChainNotice } from "../components/ChainNotice";
import { intentSettings } from "../lib/intents";
import { BridgeForm } from "./bridge/BridgeForm";
import { FastWithdrawals } from "./bridge/FastWithdrawals";
import { Withdrawals } from "./bridge/Withdrawals";

/**
 * The standard bridge between L1 and L2: deposits arrive on L2 by themselves; withdrawals need a proof and,
 * after the challenge period, a finalization on L1, which the list of the account's withdrawals offers. A
 * withdrawal can instead be fast: an intent order on the L2 that a solver fills on L1 within a few blocks, for a
 * fee; the list of the account's fast withdrawals follows each to its settlement (or offers its refund).
 */
export default function BridgePage() {
  const { address } = useConnection();
  const intents = intentSettings(useAppSettings().config);
  return (
    <section>
      <h1>Bridge</h1>
      <ChainNotice expected="either" />
      <BridgeForm account={address} />
      {address === undefined ? (
        <p className="hint">Connect a wallet to bridge and to see your withdrawals.</p>
      ) : (
        <>
          <Withdrawals key={address} account={address} />
          {intents !== undefined && <FastWithdrawals key={`fast-${address}`} account={address} intents={intents} />}
        </>
      )}
    </section>
  );
}
