import { useEffect, useRef, useState, type RefObject } from "react";
import { Link } from "react-router";
import { useConnection, useDisconnect } from "wagmi";

import { useAppSettings } from "../app-context";
import { explorerPaths } from "./ExplorerLink";
import { SwitchChainButton } from "./SwitchChainButton";
import { outside, useDismiss } from "../hooks/useDismiss";
import "./wallet.css";

export interface AccountMenuProps {
  id: string;
  address: string;
  /** How many pixels the panel reaches past the account button's right edge, to stay on a narrow screen. */
  shift: number;
  /** The account button: a click on it is not a click outside. */
  trigger: RefObject<HTMLButtonElement | null>;
  /** Closes the panel; `returnFocus` when the keyboard closed it. */
  onClose: (returnFocus: boolean) => void;
  /** Disconnect was pressed: the panel closes, and the focus goes to the Connect button that replaces the account's. */
  onDisconnect: () => void;
}

/**
 * The connected account's panel, a disclosure below the account button: the wallet and its full address,
 * **Copy address** ("Copied" announced), **View in the explorer** (the address's page on the L2), the network
 * the wallet is on (said when it is not this app's L2, with the switch), and **Disconnect**. Escape closes it
 * and returns the focus to the account button; a click or the focus elsewhere closes it too.
 */
export default function AccountMenu({ id, address, shift, trigger, onClose, onDisconnect }: AccountMenuProps) {
  const { connector, chainId } = useConnection();
  const { chains } = useAppSettings();
  const disconnect = useDisconnect();
  const panel = useRef<HTMLDivElement>(null);
  const [copied, setCopied] = useState("");
  useEffect(() => {
    panel.current?.querySelector<HTMLElement>("button, a[href]")?.focus();
  }, []);
  useDismiss(true, panel, trigger, (how) => onClose(how === "key"));

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(address);
      setCopied("Copied");
    } catch {
      setCopied("The browser did not allow copying: select the address above instead.");
    }
  };

  const onL2 = chainId === chains.l2.id;
  const chain = [chains.l2, chains.l1].find((candidate) => candidate.id === chainId);
  const chainName = chain === undefined ? `chain ${chainId}` : `${chain.name} (chain ${chain.id})`;

  return (
    <div
      ref={panel}
      id={id}
      className="wallet-panel"
      // Set through the CSSOM (the content security policy refuses style attributes, not this).
      style={{ right: -shift }}
      role="group"
      aria-label="Your account"
      data-testid="account-menu"
      // Tabbing out of the panel (past its last control, or back before its first) closes it. A click on its
      // text leaves the focus nowhere (no related target): the panel stays, so its address can be selected.
      onBlur={(event) => {
        if (event.relatedTarget !== null && outside(event.relatedTarget, panel.current, trigger.current)) onClose(false);
      }}
    >
      <p className="wallet-panel-wallet">{connector?.name ?? "Wallet"}</p>
      <p className="wallet-panel-address">
        <code data-testid="account-address">{address}</code>
      </p>
      <ul className="wallet-actions">
        <li>
          <button type="button" className="secondary" onClick={() => void copy()}>
            Copy address
          </button>{" "}
          <span className={copied === "Copied" ? "wallet-copied" : "wallet-copied error"} role="status" aria-live="polite">
            {copied}
          </span>
        </li>
        <li>
          <Link to={explorerPaths.address("l2", address)} onClick={() => onClose(false)}>
            View in the explorer
          </Link>
        </li>
      </ul>
      <p className="wallet-network" data-testid="wallet-network">
        Network: {onL2 ? chainName : `${chainName}, not this app's L2 (${chains.l2.name}).`}
      </p>
      {!onL2 && <SwitchChainButton chainId={chains.l2.id} variant="secondary" />}
      <button
        type="button"
        className="secondary wallet-disconnect"
        onClick={() => {
          disconnect.disconnect();
          onDisconnect();
        }}
      >
        Disconnect
      </button>
    </div>
  );
}
