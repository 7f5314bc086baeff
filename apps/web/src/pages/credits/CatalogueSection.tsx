import { useState } from "react";
import { useConnection } from "wagmi";

import { useAppSettings } from "../../app-context";
import { SwitchChainButton } from "../../components/SwitchChainButton";
import type { Catalogue, CatalogueItem, CreditAccount } from "./credits-api";
import { describeDelivery, formatCredits } from "./delivery";
import type { CreditsSettings } from "./settings";
import { useRedemption, type RedemptionState } from "./useRedemption";

interface CatalogueSectionProps {
  settings: CreditsSettings;
  catalogue: Catalogue;
  /** The wallet's credits, once read: what Redeem checks the price against. */
  account: CreditAccount | undefined;
}

/** The operator's items, each with its price, what a unit delivers, a quantity and Redeem. */
export function CatalogueSection({ settings, catalogue, account }: CatalogueSectionProps) {
  return (
    <section aria-labelledby="catalogue-heading">
      <h2 id="catalogue-heading">Catalogue</h2>
      <p className="hint">
        Redeeming spends credits on an item and gives you a voucher, signed by the credits service, that your wallet claims on the L2
        (below, under Your vouchers). Your wallet first signs the request, so that no one else can spend your credits.
      </p>
      {catalogue.items.length === 0 ? (
        <p>The catalogue is empty.</p>
      ) : (
        <div className="grid">
          {catalogue.items.map((item) => (
            <ItemCard key={item.id} settings={settings} item={item} account={account} />
          ))}
        </div>
      )}
    </section>
  );
}

function ItemCard({ settings, item, account }: { settings: CreditsSettings; item: CatalogueItem; account: CreditAccount | undefined }) {
  const { config } = useAppSettings();
  const [text, setText] = useState("1");
  const quantity =
    /^\d+$/.test(text.trim()) && Number(text.trim()) >= 1 && Number(text.trim()) <= item.maxQuantity ? BigInt(text.trim()) : undefined;
  const total = quantity === undefined ? undefined : item.priceCredits * Number(quantity);
  const headingId = `item-${item.id}-name`;
  const quantityId = `item-${item.id}-quantity`;
  return (
    <article className="panel catalogue-item" aria-labelledby={headingId} data-testid="catalogue-item" data-item-id={item.id}>
      <h3 id={headingId}>{item.name}</h3>
      {item.description !== "" && <p>{item.description}</p>}
      <dl className="facts">
        <dt>Price</dt>
        <dd>{formatCredits(item.priceCredits)} per unit</dd>
        <dt>One unit</dt>
        <dd data-testid="unit-delivers">{describeDelivery(item, BigInt(item.amountPerUnit), config.contracts)}</dd>
      </dl>
      <div className="field">
        <label htmlFor={quantityId}>Quantity</label>
        <input
          id={quantityId}
          type="number"
          inputMode="numeric"
          min={1}
          max={item.maxQuantity}
          step={1}
          value={text}
          onChange={(event) => setText(event.target.value)}
          aria-invalid={quantity === undefined}
          aria-describedby={`${quantityId}-hint`}
        />
        <p className="hint" id={`${quantityId}-hint`}>
          {item.maxQuantity === 1 ? "One per redemption." : `1 to ${item.maxQuantity} per redemption.`}
        </p>
      </div>
      <p aria-live="polite" data-testid="item-total">
        {quantity === undefined
          ? `Enter a quantity from 1 to ${item.maxQuantity}.`
          : `${formatCredits(total!)} for ${describeDelivery(item, BigInt(item.amountPerUnit) * quantity, config.contracts)}`}
      </p>
      <RedeemButton settings={settings} item={item} quantity={quantity} total={total} account={account} />
    </article>
  );
}

interface RedeemButtonProps {
  settings: CreditsSettings;
  item: CatalogueItem;
  quantity: bigint | undefined;
  total: number | undefined;
  account: CreditAccount | undefined;
}

/** Redeem, disabled with the reason when it cannot go through; on the wrong chain, the switch to the L2 first. */
function RedeemButton({ settings, item, quantity, total, account }: RedeemButtonProps) {
  const { status: connection, chainId } = useConnection();
  const { state, attempts, redeem } = useRedemption(settings, item.id);
  const busy = state.status === "signing" || state.status === "sending";

  // After a lost answer the balance may already show the spending: the retry is left to the service, which
  // answers the voucher it made or says why not.
  const retrying = state.status === "uncertain";
  let blocker: string | undefined;
  if (connection !== "connected") blocker = "Connect a wallet first.";
  else if (quantity === undefined || total === undefined) blocker = `Enter a quantity from 1 to ${item.maxQuantity}.`;
  else if (retrying) blocker = undefined;
  else if (account === undefined) blocker = "Reading your credits…";
  else if (account.owed > 0) blocker = `You owe ${formatCredits(account.owed)}: buy credits to pay it first.`;
  else if (total > account.balance) blocker = `This costs ${formatCredits(total)}; you hold ${formatCredits(account.balance)}.`;

  if (connection === "connected" && chainId !== settings.chainId) {
    return (
      <div className="redeem">
        <SwitchChainButton chainId={settings.chainId} />
      </div>
    );
  }
  return (
    <div className="redeem" data-attempts={attempts}>
      <button
        type="button"
        disabled={blocker !== undefined || busy}
        aria-busy={busy}
        onClick={() => void redeem(quantity!, BigInt(item.priceCredits) * BigInt(quantity!))}
      >
        Redeem
      </button>
      {blocker !== undefined && (
        <p className="hint" data-testid="redeem-blocker">
          {blocker}
        </p>
      )}
      <RedemptionStatus state={state} item={item} />
    </div>
  );
}

/** Where the redemption stands, announced as it changes; a refusal in the service's own words. */
function RedemptionStatus({ state, item }: { state: RedemptionState; item: CatalogueItem }) {
  const { config } = useAppSettings();
  switch (state.status) {
    case "idle":
      return <p className="redeem-status" role="status" aria-live="polite" data-testid="redeem-status" />;
    case "signing":
      return (
        <p className="redeem-status" role="status" aria-live="polite" data-testid="redeem-status">
          Sign the request in your wallet…
        </p>
      );
    case "sending":
      return (
        <p className="redeem-status" role="status" aria-live="polite" data-testid="redeem-status">
          Sending the request to the credits service…
        </p>
      );
    case "made": {
      const { answer } = state;
      const what = describeDelivery(item, BigInt(answer.voucher.amount), config.contracts);
      return (
        <p className="redeem-status success" role="status" aria-live="polite" data-testid="redeem-status">
          {answer.replayed
            ? `This request had been made already: its voucher (${what}) is under Your vouchers, and no credits were spent twice.`
            : `Voucher made: ${what} for ${formatCredits(answer.price)}. Claim it under Your vouchers.`}
        </p>
      );
    }
    case "refused":
      return (
        <p className="redeem-status error" role="alert" data-testid="redeem-status">
          Not redeemed: {state.message}
        </p>
      );
    case "uncertain":
      return (
        <p className="redeem-status error" role="alert" data-testid="redeem-status">
          {state.message} The voucher may have been made. Press Redeem again with the same quantity: the same request is sent, and the
          service never redeems one request twice.
        </p>
      );
  }
}
