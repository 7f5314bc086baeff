import { useState } from "react";

import { AmountField, useAmountInput } from "../../components/AmountField";
import { CreditsServiceError, postCheckout, type Catalogue } from "./credits-api";
import { formatCredits, formatPrice } from "./delivery";
import type { CreditsSettings } from "./settings";

type CheckoutState =
  | { status: "idle" }
  | { status: "opening" }
  | { status: "redirecting" }
  /** The service takes no payments (no Stripe account): purchases are simulated with the project's command. */
  | { status: "simulated"; credits: number }
  | { status: "failed"; message: string };

/** The default amount, as the local purchase command's documentation uses it. */
const DEFAULT_CREDITS = "5000";

/**
 * Buying credits: the service opens a Stripe Checkout session for the wallet and the page sends the buyer
 * there; Stripe's webhook credits the account once paid. A service without a Stripe account (every local
 * network) answers 501: the page then gives the command that sends the webhook Stripe would.
 */
export function BuyCredits({
  settings,
  catalogue,
  wallet,
}: {
  settings: CreditsSettings;
  catalogue: Catalogue | undefined;
  wallet: string | undefined;
}) {
  const [state, setState] = useState<CheckoutState>({ status: "idle" });
  const step = catalogue?.creditsPerMinorUnit ?? 1;
  // Credits are whole: 0 decimals. Beyond a safe integer the service's JSON number would not carry them exactly.
  const amount = useAmountInput(
    {
      decimals: 0,
      malformed: "Enter a whole number of credits.",
      max: BigInt(Number.MAX_SAFE_INTEGER),
      aboveMax: "Enter a whole number of credits.",
      step: { size: BigInt(step), message: `Credits are sold in multiples of ${step}.` },
    },
    DEFAULT_CREDITS,
  );
  const credits = amount.value === undefined ? undefined : Number(amount.value);
  const blocker =
    wallet === undefined
      ? "Connect a wallet first."
      : (amount.error ?? (credits === undefined ? "Enter a whole number of credits." : undefined));

  const buy = async () => {
    setState({ status: "opening" });
    try {
      const { url } = await postCheckout(settings.serviceUrl, wallet!, credits!);
      setState({ status: "redirecting" });
      window.location.assign(url);
    } catch (error) {
      if (error instanceof CreditsServiceError && error.status === 501) setState({ status: "simulated", credits: credits! });
      else setState({ status: "failed", message: error instanceof Error ? error.message : String(error) });
    }
  };

  return (
    <section className="panel" aria-labelledby="buy-credits-heading">
      <h2 id="buy-credits-heading">Buy credits</h2>
      <p className="hint">
        You pay by card or another payment method on Stripe's checkout page; the credits arrive here once the payment is confirmed.
      </p>
      <AmountField
        id="credits-to-buy"
        label="Credits to buy"
        amount={amount}
        hintProps={{ id: "credits-price", "aria-live": "polite" }}
        hint={
          credits === undefined || catalogue === undefined
            ? ""
            : `${formatCredits(credits)} cost ${formatPrice(credits, catalogue.currency, catalogue.creditsPerMinorUnit)}.`
        }
      />
      <button
        type="button"
        disabled={blocker !== undefined || state.status === "opening" || state.status === "redirecting"}
        onClick={() => void buy()}
      >
        Buy credits
      </button>
      {blocker !== undefined && <p className="hint">{blocker}</p>}
      <CheckoutOutcome state={state} wallet={wallet} />
    </section>
  );
}

function CheckoutOutcome({ state, wallet }: { state: CheckoutState; wallet: string | undefined }) {
  switch (state.status) {
    case "idle":
      return <p role="status" aria-live="polite" />;
    case "opening":
      return <p role="status">Opening a checkout…</p>;
    case "redirecting":
      return <p role="status">Going to Stripe's checkout page…</p>;
    case "failed":
      return (
        <p className="error" role="alert">
          Could not open a checkout: {state.message}
        </p>
      );
    case "simulated":
      return (
        <div role="status" data-testid="simulated-purchase">
          <p>
            This network's credits service takes no payments (it has no Stripe account): purchases are simulated. From the project's folder,
            send the payment Stripe would report for this wallet:
          </p>
          <pre className="command">
            <code data-testid="purchase-command">{`npm run credits:stripe -- purchase --account ${wallet} --credits ${state.credits}`}</code>
          </pre>
          <p className="hint">Your balance above shows the credits within a few seconds.</p>
        </div>
      );
  }
}
