import { useConnect, useConnection, useConnectors, useDisconnect } from "wagmi";

import { describeError } from "../lib/errors";
import { HexLink } from "./ExplorerLink";

/**
 * Connects a browser wallet. Wallets announce themselves through EIP-6963, so each appears by its own
 * name and icon; with none installed the page says so.
 */
export function ConnectWallet() {
  const { address, status, connector } = useConnection();
  const connectors = useConnectors();
  const connect = useConnect();
  const disconnect = useDisconnect();

  if (status === "connected" && address !== undefined) {
    return (
      <div className="wallet">
        <span className="wallet-address" title={address} data-testid="connected-address">
          {connector?.name ?? "Wallet"}: <HexLink chain="l2" kind="address" value={address} />
        </span>
        <button type="button" className="secondary" onClick={() => disconnect.disconnect()}>
          Disconnect
        </button>
      </div>
    );
  }
  if (status === "reconnecting" || status === "connecting") {
    return (
      <p className="wallet hint" role="status">
        Connecting to your wallet…
      </p>
    );
  }
  if (connectors.length === 0) {
    return <p className="wallet hint">No browser wallet found: install MetaMask or another wallet to act on the network.</p>;
  }
  return (
    <div className="wallet">
      {connectors.map((candidate) => (
        <button type="button" key={candidate.uid} disabled={connect.isPending} onClick={() => connect.connect({ connector: candidate })}>
          {candidate.icon !== undefined && <img src={candidate.icon} alt="" width={18} height={18} />}
          Connect {candidate.name}
        </button>
      ))}
      {connect.error !== null && (
        <p className="error" role="alert">
          {describeError(connect.error)}
        </p>
      )}
    </div>
  );
}
