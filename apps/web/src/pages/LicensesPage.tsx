import { useState } from "react";
import { useConfig, useConnection, useReadContract, useReadContracts } from "wagmi";

import { useAppSettings } from "../app-context";
import { ApproveButton } from "../components/ApproveButton";
import { ChainNotice } from "../components/ChainNotice";
import { TxButton } from "../components/TxButton";
import { WalletRequired } from "../components/WalletRequired";
import { nodeLicenseAbi } from "../generated/abis";
import { useOwnedLicenses } from "../hooks/useOwnedLicenses";
import { usePrimaryFunds } from "../hooks/usePrimaryFunds";
import { describeError } from "../lib/errors";
import { formatAmount } from "../lib/format";
import { simulateAndWrite } from "../lib/transactions";
import { PriceTiers } from "./licenses/PriceTiers";

/** Buying node licenses at the tiered price, with the shown quote as the price limit. */
export default function LicensesPage() {
  const { config, chains } = useAppSettings();
  const license = { address: config.contracts.l2.NodeLicense, abi: nodeLicenseAbi, chainId: chains.l2.id } as const;
  const sale = useReadContracts({
    contracts: [
      { ...license, functionName: "priceTiers" },
      { ...license, functionName: "totalMinted" },
      { ...license, functionName: "MAX_SUPPLY" },
      { ...license, functionName: "MAX_PER_MINT" },
    ],
    allowFailure: false,
  });
  const [tiers, totalMinted, maxSupply, maxPerMint] = sale.data ?? [];
  const soldOut = totalMinted !== undefined && maxSupply !== undefined && totalMinted >= maxSupply;
  // quote(1) reverts once sold out, so it is not asked then.
  const unitPrice = useReadContract({
    ...license,
    functionName: "quote",
    args: [1n],
    query: { enabled: sale.data !== undefined && !soldOut },
  });

  return (
    <section>
      <ChainNotice expected="l2" />
      <WalletRequired>Connect a wallet to buy licenses and to see those you hold.</WalletRequired>
      {sale.data === undefined ? (
        <p className={sale.error === null ? undefined : "error"} role="status">
          {sale.error === null ? "Loading the sale…" : describeError(sale.error)}
        </p>
      ) : (
        <>
          <dl className="facts">
            <dt>Current price</dt>
            <dd data-testid="license-price">
              {soldOut
                ? "Sold out"
                : unitPrice.data !== undefined
                  ? `${formatAmount(unitPrice.data)} primary tokens per license`
                  : unitPrice.error !== null
                    ? describeError(unitPrice.error)
                    : "…"}
            </dd>
            <dt>Minted</dt>
            <dd data-testid="license-supply">
              {totalMinted!.toString()} of {maxSupply!.toString()}
            </dd>
          </dl>
          <PriceTiers tiers={tiers!} totalMinted={totalMinted!} maxSupply={maxSupply!} />
          {soldOut ? <p>All licenses are sold.</p> : <BuyForm maxPerMint={maxPerMint!} />}
        </>
      )}
      <OwnedLicenses />
    </section>
  );
}

/** Quantity, the contract's quote for it, then Approve and Buy with that quote as the limit. */
function BuyForm({ maxPerMint }: { maxPerMint: bigint }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const spender = config.contracts.l2.NodeLicense;
  const [text, setText] = useState("1");
  const quantity = /^\d+$/.test(text.trim()) && BigInt(text.trim()) > 0n ? BigInt(text.trim()) : undefined;
  // Quantities the contract refuses (above MAX_PER_MINT or the remaining supply) make quote() revert;
  // its decoded error is shown in place of the total.
  const quote = useReadContract({
    address: spender,
    abi: nodeLicenseAbi,
    chainId: chains.l2.id,
    functionName: "quote",
    args: [quantity ?? 1n],
    query: { enabled: quantity !== undefined },
  });
  const total = quantity === undefined ? undefined : quote.data;
  const { balance, allowance } = usePrimaryFunds(spender);

  const blocker =
    total === undefined
      ? "Enter a quantity the sale accepts."
      : balance !== undefined && total > balance
        ? `You hold ${formatAmount(balance)} primary tokens.`
        : allowance === undefined || allowance < total
          ? "Approve the total first."
          : undefined;

  return (
    <section className="panel" aria-labelledby="buy-heading">
      <h2 id="buy-heading">Buy licenses</h2>
      <div className="field">
        <label htmlFor="license-quantity">Quantity</label>
        <input
          id="license-quantity"
          type="number"
          min={1}
          max={Number(maxPerMint)}
          step={1}
          value={text}
          onChange={(event) => setText(event.target.value)}
          aria-invalid={quantity === undefined}
          aria-describedby="quantity-hint"
        />
        <p className="hint" id="quantity-hint">
          Up to {maxPerMint.toString()} per purchase.
        </p>
      </div>
      <p aria-live="polite">
        Total:{" "}
        {quantity === undefined ? (
          <span className="error">enter a whole number of licenses, at least 1.</span>
        ) : quote.error !== null ? (
          <span className="error">{describeError(quote.error)}</span>
        ) : total === undefined ? (
          "…"
        ) : (
          <strong data-testid="license-total">{formatAmount(total)} primary tokens</strong>
        )}
      </p>
      <p className="hint">
        Buy pays at most this total: if the price moves before your purchase is mined (someone else buys first and a tier fills up), the
        purchase fails rather than charging you more, and nothing is taken.
      </p>
      <ApproveButton spender={spender} amount={total} allowance={allowance} />
      <TxButton
        chainId={chains.l2.id}
        disabled={blocker !== undefined}
        disabledReason={blocker}
        send={() =>
          simulateAndWrite(wagmiConfig, {
            address: spender,
            abi: nodeLicenseAbi,
            chainId: chains.l2.id,
            functionName: "buy",
            args: [quantity!, total!],
          })
        }
      >
        Buy
      </TxButton>
    </section>
  );
}

/** The licenses the connected wallet holds, refreshed after each purchase with every other read. */
function OwnedLicenses() {
  const { address } = useConnection();
  const { licenseIds, isLoading, error } = useOwnedLicenses(address);
  // Without a wallet there is nothing to list: the page says once what a wallet is for.
  if (address === undefined) return null;
  return (
    <section aria-labelledby="owned-heading">
      <h2 id="owned-heading">Your licenses</h2>
      {error !== null ? (
        <p className="error">{describeError(error)}</p>
      ) : licenseIds === undefined || isLoading ? (
        <p role="status">Loading your licenses…</p>
      ) : licenseIds.length === 0 ? (
        <p>You hold no licenses.</p>
      ) : (
        <ul data-testid="owned-licenses">
          {licenseIds.map((id) => (
            <li key={id.toString()}>License #{id.toString()}</li>
          ))}
        </ul>
      )}
    </section>
  );
}
