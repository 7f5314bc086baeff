import { keepPreviousData } from "@tanstack/react-query";
import { useState } from "react";
import { useConfig, useReadContracts } from "wagmi";

import { useAppSettings } from "../../app-context";
import { AmountField, useAmountInput } from "../../components/AmountField";
import { TxButton } from "../../components/TxButton";
import { stakedTokenAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";
import { formatAmount, formatDuration, formatRate } from "../../lib/format";
import { simulateAndWrite } from "../../lib/transactions";

const DAY = 86_400;

/** Days as the number input shows them: six decimals round-trip any whole second exactly. */
const toDaysText = (seconds: number) => String(Number((seconds / DAY).toFixed(6)));

/** The slider's snap: whole days on a long range, hours or minutes on the short ranges of a devnet. */
function snapUnit(range: number): number {
  if (range >= 30 * DAY) return DAY;
  if (range >= 2 * DAY) return 3_600;
  return range >= 2 * 3_600 ? 60 : 1;
}

/** Requesting a redemption: amount, unlock period within the contract's bounds, and the contract's own preview. */
export function RedeemForm({ stakedBalance }: { stakedBalance: bigint | undefined }) {
  const { config, chains } = useAppSettings();
  const staked = { address: config.contracts.l2.StakedToken, abi: stakedTokenAbi, chainId: chains.l2.id } as const;
  const bounds = useReadContracts({
    contracts: [
      { ...staked, functionName: "minUnlockPeriod" },
      { ...staked, functionName: "maxUnlockPeriod" },
    ],
    allowFailure: false,
  });

  return (
    <section className="panel" aria-labelledby="redeem-heading">
      <h2 id="redeem-heading">Request a redemption</h2>
      {bounds.data === undefined ? (
        <p className={bounds.error === null ? "hint" : "error"} role="status">
          {bounds.error === null ? "Loading the unlock periods…" : describeError(bounds.error)}
        </p>
      ) : (
        // Periods are at most MAX_UNLOCK_PERIOD_CAP (4 years), well within a JS number.
        <RedeemFields min={Number(bounds.data[0])} max={Number(bounds.data[1])} stakedBalance={stakedBalance} />
      )}
    </section>
  );
}

function RedeemFields({ min, max, stakedBalance }: { min: number; max: number; stakedBalance: bigint | undefined }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const staked = { address: config.contracts.l2.StakedToken, abi: stakedTokenAbi, chainId: chains.l2.id } as const;
  const amountInput = useAmountInput({
    decimals: 18,
    max: stakedBalance,
    aboveMax: stakedBalance === undefined ? undefined : `You hold ${formatAmount(stakedBalance)} staked tokens.`,
  });
  const amount = amountInput.value;
  // The number input keeps the typed text (a half-typed "1." must survive); `seconds` is the last
  // valid period, which the slider and the preview use. It starts at the shortest period.
  const [period, setPeriod] = useState<{ seconds: number; text: string; error?: string }>({ seconds: min, text: toDaysText(min) });
  const seconds = Math.min(Math.max(period.seconds, min), max); // the schedule may have changed since
  const periodValid = period.error === undefined;

  const typeDays = (text: string) => {
    const days = Number(text);
    const typed = Math.round(days * DAY);
    if (text.trim() === "" || !Number.isFinite(days) || typed < min || typed > max) {
      setPeriod({ seconds, text, error: `Choose between ${toDaysText(min)} and ${toDaysText(max)} days.` });
    } else setPeriod({ seconds: typed, text });
  };
  const slide = (days: number) => {
    const unit = snapUnit(max - min);
    const snapped = Math.min(Math.max(Math.round((days * DAY) / unit) * unit, min), max);
    setPeriod({ seconds: snapped, text: toDaysText(snapped) });
  };

  // The rate and the payout come from the contract itself, so the page cannot disagree with it.
  // Previous figures stay on screen while the next ones load, so the text does not flicker on a drag.
  const preview = useReadContracts({
    contracts: [
      { ...staked, functionName: "redemptionRate", args: [BigInt(seconds)] },
      { ...staked, functionName: "previewRedemption", args: [amount ?? 0n, BigInt(seconds)] },
    ],
    allowFailure: false,
    query: { enabled: periodValid, placeholderData: keepPreviousData },
  });
  const fresh = preview.data !== undefined && !preview.isPlaceholderData;
  const primaryOut = preview.data?.[1];

  const blocker =
    amount === undefined
      ? (amountInput.error ?? "Enter an amount to redeem.")
      : !periodValid
        ? "Choose an unlock period within the allowed range."
        : fresh && primaryOut === 0n
          ? "This amount is too small to pay anything at this rate."
          : undefined;

  return (
    <>
      <AmountField id="redeem-amount" label="Amount to redeem" amount={amountInput} withMax />
      <div className="field">
        <label htmlFor="unlock-slider">Unlock period slider</label>
        <input
          id="unlock-slider"
          type="range"
          min={min / DAY}
          max={max / DAY}
          step="any"
          value={seconds / DAY}
          aria-valuetext={formatDuration(seconds)}
          onChange={(event) => slide(Number(event.target.value))}
        />
        <label htmlFor="unlock-days">Unlock period (days)</label>
        <input
          id="unlock-days"
          type="number"
          min={min / DAY}
          max={max / DAY}
          step="any"
          value={period.text}
          onChange={(event) => typeDays(event.target.value)}
          aria-invalid={!periodValid}
          aria-describedby="unlock-hint unlock-error"
        />
        <p className="hint" id="unlock-hint">
          From {formatDuration(min)} to {formatDuration(max)}. A longer period pays a larger share.
        </p>
        {period.error !== undefined && (
          <p className="error" id="unlock-error">
            {period.error}
          </p>
        )}
      </div>

      <div className="panel" data-testid="redemption-preview" aria-live="polite" aria-busy={preview.isFetching}>
        {preview.error !== null ? (
          <span className="error">{describeError(preview.error)}</span>
        ) : preview.data === undefined ? (
          "Reading the rate…"
        ) : (
          <>
            Rate for {formatDuration(seconds)}: <strong>{formatRate(preview.data[0])}</strong>.{" "}
            {amount === undefined ? (
              "Enter an amount to see what you receive."
            ) : (
              <>
                Redeeming {formatAmount(amount)} staked tokens pays <strong>{formatAmount(preview.data[1])} primary tokens</strong>.
              </>
            )}
          </>
        )}
      </div>
      <p className="hint">
        The staked tokens leave your balance when you request, and the payout is fixed at this rate. You can cancel before completing to get
        the full staked amount back; the unpaid share is forfeited only on completion.
      </p>

      <TxButton
        chainId={chains.l2.id}
        disabled={blocker !== undefined}
        disabledReason={blocker}
        onMined={() => amountInput.setText("")}
        send={() => simulateAndWrite(wagmiConfig, { ...staked, functionName: "requestRedemption", args: [amount!, BigInt(seconds)] })}
      >
        Request redemption
      </TxButton>
    </>
  );
}
