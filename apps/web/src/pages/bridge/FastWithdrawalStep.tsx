import { useState } from "react";
import { parseEventLogs, type Address, type Hex, type TransactionReceipt } from "viem";
import { useConfig, useReadContract } from "wagmi";

import { encodeOrderData, ORDER_DATA_TYPE } from "@avn/protocol/intents";
import { useAppSettings } from "../../app-context";
import { TxButton } from "../../components/TxButton";
import { primaryTokenAbi } from "../../generated/abis";
import { originSettlerAbi } from "../../generated/intent-abis";
import { formatAmount, formatBps, formatDuration } from "../../lib/format";
import { FAST_FILL_BLOCKS, fastFillDeadline, fastQuote, orderTokens, type IntentSettings } from "../../lib/intents";
import { intentClients } from "./intent-status";
import { ASSET_NAMES, writeChecked, type Asset } from "./shared";

/**
 * The Bridge form's fast withdrawal (L2 → L1 through the intent layer): the quote (what arrives on L1, the fee, how
 * soon, against the standard bridge's challenge period), the approval of the origin settler for a token input when
 * its allowance is short, and `open` with a fill deadline ten minutes ahead (`fastFillDeadline`). The order then
 * appears in the list of fast withdrawals, which follows it.
 */
export function FastWithdrawalStep({
  account,
  asset,
  amount,
  disabledReason,
  intents,
  challengePeriod,
  onOpened,
}: {
  account: Address | undefined;
  asset: Asset;
  /** The amount typed, once it reads as one within the balance. */
  amount: bigint | undefined;
  /** Why the amount cannot be sent yet (the form's reason), if it cannot. */
  disabledReason: string | undefined;
  intents: IntentSettings | undefined;
  /** The standard bridge's challenge period in seconds (the output oracle's), once read. */
  challengePeriod: bigint | undefined;
  /** Called once an order is opened (the form clears its amount: the allowance it had is spent). */
  onOpened?: () => void;
}) {
  const wagmiConfig = useConfig();
  const settings = useAppSettings();
  const { config, chains } = settings;
  const [opened, setOpened] = useState<{ orderId: Hex; output: bigint; asset: Asset }>();
  // The approval step stays on screen, with its outcome, once it has done its job for this amount.
  const [approved, setApproved] = useState<bigint>();
  const allowance = useReadContract({
    address: config.contracts.l2.PrimaryToken,
    abi: primaryTokenAbi,
    functionName: "allowance",
    args: account === undefined || intents === undefined ? undefined : [account, intents.originSettler],
    chainId: chains.l2.id,
    query: { enabled: account !== undefined && intents !== undefined && asset === "token" },
  });

  if (intents === undefined)
    return (
      <p className="error" role="alert">
        This deployment&apos;s configuration names no intent settlers (OriginSettler on the L2, DestinationSettler on L1): fast withdrawals
        are not available on this network. Use the standard withdrawal.
      </p>
    );

  const quote = amount === undefined ? undefined : fastQuote(amount, intents.feeBps);
  const name = ASSET_NAMES[asset];
  const blockSeconds = config.l1.blockSeconds;
  const soon = `${FAST_FILL_BLOCKS.min}–${FAST_FILL_BLOCKS.max} L1 blocks (about ${formatDuration(FAST_FILL_BLOCKS.min * blockSeconds)} to ${formatDuration(FAST_FILL_BLOCKS.max * blockSeconds)})`;
  const standard =
    challengePeriod === undefined
      ? "after the challenge period"
      : `after the challenge period (${formatDuration(challengePeriod)} on this network)`;
  const feeSource = intents.feeFromSettings
    ? "the deployment's solver's fee"
    : "the reference solver's default fee: this deployment names none";
  const needsApproval = asset === "token" && amount !== undefined && allowance.data !== undefined && allowance.data < amount;
  const showApproval = needsApproval || (approved !== undefined && approved === amount);
  const reason =
    disabledReason ??
    (quote !== undefined && quote.output === 0n
      ? "The amount is too small: nothing would be left after the fee."
      : needsApproval
        ? "Approve the settler first."
        : asset === "token" && allowance.data === undefined
          ? allowance.error !== null
            ? "Could not read the settler's allowance."
            : "Checking the settler's allowance…"
          : undefined);

  const send = async () => {
    const { l1, l2 } = intentClients(wagmiConfig, settings);
    const [l1Latest, l2Latest, maxFillPeriod] = await Promise.all([
      l1.getBlock({ blockTag: "latest" }),
      l2.getBlock({ blockTag: "latest" }),
      l2.readContract({ address: intents.originSettler, abi: originSettlerAbi, functionName: "MAX_FILL_PERIOD" }),
    ]);
    const fillDeadline = fastFillDeadline({ l1Time: l1Latest.timestamp, l2Time: l2Latest.timestamp, maxFillPeriod });
    const tokens = orderTokens(asset, config);
    const orderData = encodeOrderData({
      inputToken: tokens.input,
      inputAmount: amount!,
      outputToken: tokens.output,
      outputAmount: quote!.output,
      recipient: account!,
      destinationChainId: BigInt(chains.l1.id),
    });
    return writeChecked(wagmiConfig, {
      address: intents.originSettler,
      abi: originSettlerAbi,
      functionName: "open",
      args: [{ fillDeadline, orderDataType: ORDER_DATA_TYPE, orderData }],
      value: asset === "eth" ? amount! : 0n,
      chainId: chains.l2.id,
      account: account!,
    });
  };
  const whenOpened = (receipt: TransactionReceipt) => {
    const [event] = parseEventLogs({ abi: originSettlerAbi, eventName: "Open", logs: receipt.logs });
    if (event !== undefined && quote !== undefined) setOpened({ orderId: event.args.orderId, output: quote.output, asset });
    onOpened?.();
  };

  return (
    <>
      <p className="hint" data-testid="fast-quote" aria-live="polite">
        {quote === undefined || quote.output === 0n ? (
          <>
            A solver pays you the amount less a {formatBps(intents.feeBps)} fee on {chains.l1.name} within {soon} of your order; the
            standard withdrawal pays the whole amount {standard}, with two more transactions of yours on L1.
          </>
        ) : (
          <>
            You receive <strong>{formatAmount(quote.output, 18, 18)}</strong> {name} on {chains.l1.name}, fee{" "}
            <strong>{formatAmount(quote.fee, 18, 18)}</strong> {name} ({formatBps(intents.feeBps)}), paid by a solver within {soon}; the
            standard withdrawal pays the whole amount {standard}, with two more transactions of yours on L1.
          </>
        )}{" "}
        The fee is {feeSource}.
        {asset === "eth" &&
          " An ETH order's fee must also cover the solver's gas on both chains: a small one may go unfilled, and is refunded after its deadline."}
      </p>
      {showApproval && (
        <>
          <p className="hint">
            Step 1 of 2: allow the intent settler to escrow {formatAmount(amount ?? 0n)} of your primary token on the L2.
          </p>
          <TxButton
            chainId={chains.l2.id}
            variant="secondary"
            disabled={!needsApproval}
            disabledReason="Approved: the settler may escrow this amount."
            onMined={() => setApproved(amount)}
            send={() =>
              writeChecked(wagmiConfig, {
                address: config.contracts.l2.PrimaryToken,
                abi: primaryTokenAbi,
                functionName: "approve",
                args: [intents.originSettler, amount],
                chainId: chains.l2.id,
                account: account!,
              })
            }
          >
            Approve
          </TxButton>
        </>
      )}
      <TxButton chainId={chains.l2.id} send={send} onMined={whenOpened} disabled={reason !== undefined} disabledReason={reason}>
        Withdraw fast
      </TxButton>
      {opened !== undefined && (
        <p className="success" data-testid="fast-opened" data-order-id={opened.orderId}>
          Order opened: {formatAmount(opened.output)} {ASSET_NAMES[opened.asset]} to be paid on L1. Follow it under Fast withdrawals below.
        </p>
      )}
    </>
  );
}
