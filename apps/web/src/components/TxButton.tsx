import type { ReactNode } from "react";
import type { Hash, TransactionReceipt } from "viem";
import { useConnection } from "wagmi";

import { HexLink } from "./ExplorerLink";
import { useAppSettings } from "../app-context";
import { useTransaction, type TxState } from "../lib/transactions";
import { requestWalletList } from "../lib/wallet-intent";
import { SwitchChainButton } from "./SwitchChainButton";

export interface TxButtonProps {
  /** The chain the transaction goes to: the button offers to switch the wallet there first. */
  chainId: number;
  children: ReactNode;
  /** Sends the transaction (usually `simulateAndWrite`) and returns its hash. */
  send: () => Promise<Hash>;
  onMined?: (receipt: TransactionReceipt) => void;
  disabled?: boolean;
  /** Why the button is disabled, said next to it. */
  disabledReason?: string;
  variant?: "primary" | "secondary";
}

/**
 * A button that sends one transaction and shows where it stands: waiting for the wallet, pending with
 * its hash, mined, or failed with a readable reason (a rejection, or the contract's decoded custom
 * error). On the wrong chain it offers to switch first; with no wallet, to connect one.
 */
export function TxButton({ chainId, children, send, onMined, disabled, disabledReason, variant = "primary" }: TxButtonProps) {
  const { status: connection, chainId: walletChainId } = useConnection();
  const { state, attempts, run } = useTransaction();
  const busy = state.status === "signing" || state.status === "pending";

  // With no wallet, a form's main action offers the wallet list in its place (the page's one line says what a
  // wallet is for there, WalletRequired.tsx); its other steps (Approve) wait, disabled, as every action does
  // while wagmi reconnects the last wallet.
  if (connection === "disconnected" && variant === "primary") {
    return (
      <div className="tx">
        <button type="button" className={variant} aria-haspopup="dialog" onClick={requestWalletList}>
          Connect wallet
        </button>
      </div>
    );
  }
  if (connection !== "connected") {
    return (
      <div className="tx">
        <button type="button" className={variant} disabled>
          {children}
        </button>
      </div>
    );
  }
  if (walletChainId !== chainId) {
    return (
      <div className="tx">
        <SwitchChainButton chainId={chainId} variant={variant} disabled={busy} />
      </div>
    );
  }
  return (
    <div className="tx" data-attempts={attempts}>
      <button
        type="button"
        className={variant}
        disabled={disabled === true || busy}
        aria-busy={busy}
        onClick={() => void run(chainId, send, onMined)}
      >
        {children}
      </button>
      {disabled === true && disabledReason !== undefined && <p className="hint">{disabledReason}</p>}
      <TxStatus state={state} chainId={chainId} />
    </div>
  );
}

/** The state of a transaction in words, announced to screen readers as it changes. */
export function TxStatus({ state, chainId }: { state: TxState; chainId?: number }) {
  const { chains } = useAppSettings();
  switch (state.status) {
    case "idle":
      return <p className="tx-status" role="status" aria-live="polite" />;
    case "signing":
      return (
        <p className="tx-status" role="status" aria-live="polite">
          Confirm in your wallet…
        </p>
      );
    case "pending":
      return (
        <p className="tx-status" role="status" aria-live="polite">
          Pending: <HexLink chain={chainId === chains.l1.id ? "l1" : "l2"} kind="tx" value={state.hash} full />
        </p>
      );
    case "mined":
      return (
        <p className="tx-status success" role="status" aria-live="polite" data-tx-hash={state.hash}>
          Mined in block {state.receipt.blockNumber.toString()}.
        </p>
      );
    case "failed":
      return (
        <p className="tx-status error" role="alert">
          Failed: {state.message}
        </p>
      );
  }
}
