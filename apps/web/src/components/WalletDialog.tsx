import { useEffect, useRef, useState } from "react";
import { useConfig, useConnect, useConnection, useConnectors } from "wagmi";

import { describeError } from "../lib/errors";
import { orderWallets, recentConnectorId } from "../lib/recent-wallets";
import "./wallet.css";
import { WalletIcon } from "./WalletIcon";

/**
 * The browser's wallets, for the visitor to choose one (a modal `<dialog>`: Escape, the close button or a
 * click beside it closes it, and focus returns to the Connect button). Wallets announce themselves through
 * EIP-6963; each is listed by its own name and icon, the one last used first (wagmi records it when a
 * connection succeeds), then the others in the order they announced themselves. Choosing one asks the wallet
 * for the account; the dialog says it is waiting, shows a refusal or an error, and closes once connected. With
 * no wallet installed it says what a wallet is for and where to get one.
 */
export default function WalletDialog({ onClose }: { onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const list = useRef<HTMLUListElement>(null);
  const config = useConfig();
  const connectors = useConnectors();
  const { status } = useConnection();
  const connect = useConnect();
  // undefined until wagmi's storage has answered, so the list is drawn once, in its final order.
  const [recent, setRecent] = useState<string | null | undefined>(undefined);
  const [chosen, setChosen] = useState<string>();

  useEffect(() => {
    const element = dialog.current;
    if (element !== null && !element.open) element.showModal();
  }, []);
  useEffect(() => {
    let live = true;
    void recentConnectorId(config.storage).then((id) => {
      if (live) setRecent(id);
    });
    return () => {
      live = false;
    };
  }, [config]);
  // The first wallet has the focus once listed (showModal gave it to the close button meanwhile).
  useEffect(() => {
    if (recent !== undefined) list.current?.querySelector("button")?.focus();
  }, [recent]);
  // Connected (by this dialog, or by wagmi's own reconnection): the dialog's work is done.
  useEffect(() => {
    if (status === "connected") dialog.current?.close();
  }, [status]);

  const wallets = recent === undefined ? undefined : orderWallets(connectors, recent);
  const pendingName = connect.isPending ? connectors.find((candidate) => candidate.uid === chosen)?.name : undefined;

  return (
    <dialog
      ref={dialog}
      className="wallet-dialog"
      aria-labelledby="wallet-dialog-title"
      data-testid="wallet-dialog"
      onClose={onClose}
      // A click on the backdrop lands on the dialog element itself (its content is the inner box).
      onClick={(event) => {
        if (event.target === event.currentTarget) event.currentTarget.close();
      }}
    >
      <div className="wallet-dialog-body">
        <div className="wallet-dialog-head">
          <h2 id="wallet-dialog-title">Connect a wallet</h2>
          <button type="button" className="wallet-close" aria-label="Close" onClick={() => dialog.current?.close()}>
            <span aria-hidden="true">×</span>
          </button>
        </div>
        {connectors.length === 0 ? (
          <div data-testid="no-wallet">
            <p>
              A wallet keeps your keys and signs what you do here: buying licenses, delegating, staking, bridging, voting. Reading the
              network needs none.
            </p>
            <p>
              No browser wallet was found. Install one, such as MetaMask from{" "}
              <a href="https://metamask.io/download/" target="_blank" rel="noreferrer">
                metamask.io
              </a>
              , then reload this page.
            </p>
          </div>
        ) : wallets === undefined ? null : (
          <ul className="wallet-list" ref={list} aria-label="Wallets in this browser">
            {wallets.map((wallet) => {
              const busy = connect.isPending && wallet.uid === chosen;
              const badge = `wallet-recent-${wallet.uid}`;
              const last = wallet.id === recent;
              return (
                <li key={wallet.uid}>
                  <button
                    type="button"
                    className="wallet-option"
                    data-wallet-id={wallet.id}
                    disabled={connect.isPending}
                    aria-busy={busy}
                    aria-describedby={last ? badge : undefined}
                    onClick={() => {
                      setChosen(wallet.uid);
                      connect.connect({ connector: wallet });
                    }}
                  >
                    <WalletIcon icon={wallet.icon} name={wallet.name} size={28} />
                    <span className="wallet-name">{wallet.name}</span>
                    {last && (
                      // Described, not named: the button's name stays the wallet's.
                      <span className="wallet-badge" id={badge} aria-hidden="true">
                        Last used
                      </span>
                    )}
                  </button>
                </li>
              );
            })}
          </ul>
        )}
        <p className="wallet-dialog-status" role="status" aria-live="polite">
          {pendingName !== undefined && `Waiting for ${pendingName}: approve the connection in its window.`}
        </p>
        {connect.error !== null && !connect.isPending && (
          <p className="error" role="alert" data-testid="wallet-error">
            {describeError(connect.error)}
          </p>
        )}
      </div>
    </dialog>
  );
}
