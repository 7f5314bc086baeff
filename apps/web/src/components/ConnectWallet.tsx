import { Component, lazy, Suspense, useEffect, useRef, useState, type ReactNode } from "react";
import { useConnection } from "wagmi";

import { shortAddress } from "../lib/format";
import { onWalletListRequest, takeWalletIntent } from "../lib/wallet-intent";
import { WalletIcon } from "./WalletIcon";
import "./wallet.css";

// The wallet list and the account panel are chunks of their own, fetched when first wanted (the pointer over
// or the focus on their button starts the download): a visitor who only reads downloads the button alone.
const loadWalletDialog = () => import("./WalletDialog");
const loadAccountMenu = () => import("./AccountMenu");
const WalletDialog = lazy(loadWalletDialog);
const AccountMenu = lazy(loadAccountMenu);

const prefetch = (load: () => Promise<unknown>) => () => void load().catch(() => undefined);

/**
 * How far right of the account button's right edge the account panel must reach so that its left edge stays
 * 12 px inside the screen (0 when the button is far enough right); its width is wallet.css's
 * `min(20rem, 100vw - 24px)`, so it then still ends 12 px inside the right edge.
 */
const panelShift = (button: HTMLElement | null) => {
  const width = Math.min(320, window.innerWidth - 24);
  const right = button?.getBoundingClientRect().right ?? window.innerWidth - 12;
  return Math.max(0, Math.ceil(12 - (right - width)));
};

/**
 * The header's wallet control. Disconnected: one **Connect wallet** button, which opens the list of the
 * browser's wallets (EIP-6963: each by its name and icon, the last used first), or, with none installed, says
 * what a wallet is for and how to get one. Connected: the account's button (the wallet's icon and the short
 * address; `data-testid="connected-address"`, the full address as its title), which opens the account panel:
 * copy the address, open it in the explorer, the wallet's network, Disconnect.
 */
export function ConnectWallet() {
  const { address, status, connector } = useConnection();
  const [panel, setPanel] = useState<"wallets" | "account" | null>(null);
  const [shift, setShift] = useState(0);
  const trigger = useRef<HTMLButtonElement>(null);
  // Where the focus goes next: back to the header's button once a panel closes ("now": the Connect button
  // after the dialog was dismissed, the account button after a connection succeeded), or to the button that
  // replaces the account's once the wallet has disconnected ("on-change").
  const focusNext = useRef<"now" | "on-change" | null>(null);
  const connected = status === "connected" && address !== undefined;

  // Carries out what was done with the shell's early Connect button, which this one replaces (App.tsx), and
  // opens the list when a page's Connect button asks (TxButton.tsx).
  useEffect(() => {
    const intent = takeWalletIntent();
    if (intent.focus) trigger.current?.focus();
    if (intent.open) setPanel("wallets");
    return onWalletListRequest(() => setPanel("wallets"));
  }, []);
  useEffect(() => {
    if (focusNext.current !== "now" || panel !== null) return;
    focusNext.current = null;
    trigger.current?.focus();
  });
  useEffect(() => {
    if (focusNext.current !== "on-change") return;
    focusNext.current = null;
    trigger.current?.focus();
  }, [connected]);
  const close = (returnFocus: boolean) => {
    focusNext.current = returnFocus ? "now" : null;
    setPanel(null);
  };

  let control: ReactNode;
  if (connected) {
    const open = panel === "account";
    control = (
      <div className="wallet-account">
        <button
          ref={trigger}
          type="button"
          className="wallet-account-button"
          data-testid="connected-address"
          title={address}
          aria-expanded={open}
          aria-controls={open ? "wallet-account-panel" : undefined}
          onPointerEnter={prefetch(loadAccountMenu)}
          onFocus={prefetch(loadAccountMenu)}
          onClick={() => {
            if (open) return close(false);
            setShift(panelShift(trigger.current));
            setPanel("account");
          }}
        >
          <WalletIcon icon={connector?.icon} name={connector?.name ?? "Wallet"} />
          <span className="visually-hidden">Account </span>
          <code>{shortAddress(address)}</code>
        </button>
        {open && (
          <Lazily onClose={() => close(true)}>
            <AccountMenu
              id="wallet-account-panel"
              address={address}
              shift={shift}
              trigger={trigger}
              onClose={close}
              onDisconnect={() => {
                focusNext.current = "on-change";
                setPanel(null);
              }}
            />
          </Lazily>
        )}
      </div>
    );
  } else if (status === "reconnecting") {
    // wagmi reconnects the wallet of the last visit by itself; the account button follows in a moment.
    control = (
      <p className="wallet-pending" role="status">
        Reconnecting…
      </p>
    );
  } else {
    control = (
      <button
        ref={trigger}
        type="button"
        className="wallet-connect"
        aria-haspopup="dialog"
        onPointerEnter={prefetch(loadWalletDialog)}
        onFocus={prefetch(loadWalletDialog)}
        onClick={() => setPanel("wallets")}
      >
        Connect wallet
      </button>
    );
  }

  return (
    <div className="wallet">
      {control}
      {panel === "wallets" && (
        <Lazily onClose={() => close(true)}>
          <WalletDialog onClose={() => close(true)} />
        </Lazily>
      )}
    </div>
  );
}

/**
 * A panel's chunk, loading: nothing while it downloads (a moment), and a sentence instead of a blank app if it
 * cannot (offline, or a new release replaced the file).
 */
function Lazily({ children, onClose }: { children: ReactNode; onClose: () => void }) {
  return (
    <ChunkBoundary onClose={onClose}>
      <Suspense fallback={null}>{children}</Suspense>
    </ChunkBoundary>
  );
}

class ChunkBoundary extends Component<{ children: ReactNode; onClose: () => void }, { failed: boolean }> {
  state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  render() {
    if (!this.state.failed) return this.props.children;
    return (
      <p className="error wallet-load-error" role="alert">
        The wallet panel could not be loaded: check the connection and reload the page.{" "}
        <button type="button" className="secondary" onClick={this.props.onClose}>
          Close
        </button>
      </p>
    );
  }
}
