import { useConnection } from "wagmi";

import { useAppSettings } from "../app-context";
import { ChainNotice } from "../components/ChainNotice";
import { WalletRequired } from "../components/WalletRequired";
import { intentSettings } from "../lib/intents";
import { BridgeForm } from "./bridge/BridgeForm";
import { FastOrders } from "./bridge/FastOrders";
import { Withdrawals } from "./bridge/Withdrawals";

/**
 * The standard bridge between L1 and L2: deposits arrive on L2 by themselves; withdrawals need a proof and,
 * after the challenge period, a finalization on L1, which the list of the account's withdrawals offers. A
 * withdrawal can instead be fast: an intent order on the L2 that a solver fills on L1 within a few blocks, for a
 * fee; a deposit too, the other way. The lists of the account's fast withdrawals and deposits follow each order to
 * its settlement (or offer its refund).
 */
export default function BridgePage() {
  const { address } = useConnection();
  const { config } = useAppSettings();
  const withdrawals = intentSettings(config, "withdraw");
  const deposits = intentSettings(config, "deposit");
  return (
    <section>
      <ChainNotice expected="either" />
      <WalletRequired>Connect a wallet to move ETH and primary tokens between L1 and L2.</WalletRequired>
      <BridgeForm account={address} />
      {address !== undefined && (
        <>
          <Withdrawals key={address} account={address} />
          {withdrawals !== undefined && <FastOrders key={`fast-${address}`} account={address} intents={withdrawals} />}
          {deposits !== undefined && <FastOrders key={`fast-deposits-${address}`} account={address} intents={deposits} />}
        </>
      )}
    </section>
  );
}
