import { useState } from "react";
import { parseEventLogs, type Address, type Hex, type TransactionReceipt } from "viem";
import { useConfig, useReadContract } from "wagmi";

import { encodeOrderData, ORDER_DATA_TYPE } from "@avn/protocol/intents";
import { useAppSettings } from "../../app-context";
import { TxButton } from "../../components/TxButton";
import { primaryTokenAbi } from "../../generated/abis";
import { originSettlerAbi } from "../../generated/intent-abis";
import { formatAmount, formatBps, formatDuration } from "../../lib/format";
import {
  CHAIN_LABELS,
  CHAIN_WORDS,
  FAST_FILL_BLOCKS,
  fastFillDeadline,
  fastQuote,
  orderTokens,
  type FastDirection,
  type IntentSettings,
} from "../../lib/intents";
import { intentClients } from "./intent-status";
import { ASSET_NAMES, writeChecked, type Asset } from "./shared";

/** What each direction's step says and sends. */
const STEP_WORDS: Record<FastDirection, { action: string; missing: string; standard: string; list: string }> = {
  withdraw: {
    action: "Withdraw fast",
    missing:
      "This deployment's configuration names no intent settlers (OriginSettler on the L2, DestinationSettler on L1): fast withdrawals are not available on this network. Use the standard withdrawal.",
    standard: "the standard withdrawal pays the whole amount",
    list: "Fast withdrawals",
  },
  deposit: {
    action: "Deposit fast",
    missing:
      "This deployment's configuration names no settlers for fast deposits (OriginSettler on L1, DestinationSettler on the L2): fast deposits are not available on this network. Use the standard deposit.",
    standard: "the standard deposit pays the whole amount",
    list: "Fast deposits",
  },
};

/**
 * The Bridge form's fast order through the intent layer, either way (a withdrawal L2 → L1, a deposit L1 → L2): the
 * quote (what arrives on the other chain, the fee, how soon, against the standard bridge), the approval of the origin
 * settler for a token input when its allowance is short, and `open` with a fill deadline ten minutes ahead
 * (`fastFillDeadline`). The order then appears in the list of fast orders of its direction, which follows it.
 */
export function FastOrderStep({
  direction,
  account,
  asset,
  amount,
  disabledReason,
  intents,
  challengePeriod,
  onOpened,
}: {
  direction: FastDirection;
  account: Address | undefined;
  asset: Asset;
  /** The amount typed, once it reads as one within the balance. */
  amount: bigint | undefined;
  /** Why the amount cannot be sent yet (the form's reason), if it cannot. */
  disabledReason: string | undefined;
  /** The settlers of `direction`, if the deployment names them. */
  intents: IntentSettings | undefined;
  /** The standard bridge's challenge period in seconds (the output oracle's), once read. */
  challengePeriod: bigint | undefined;
  /** Called once an order is opened (the form clears its amount: the allowance it had is spent). */
  onOpened?: () => void;
}) {
  const wagmiConfig = useConfig();
  const settings = useAppSettings();
  const { config, chains } = settings;
  const words = STEP_WORDS[direction];
  const [originKey, destinationKey] = direction === "withdraw" ? (["l2", "l1"] as const) : (["l1", "l2"] as const);
  const [originChain, destinationChain] = [chains[originKey], chains[destinationKey]];
  const [opened, setOpened] = useState<{ orderId: Hex; output: bigint; asset: Asset }>();
  // The approval step stays on screen, with its outcome, once it has done its job for this amount.
  const [approved, setApproved] = useState<bigint>();
  const allowance = useReadContract({
    address: config.contracts[originKey].PrimaryToken,
    abi: primaryTokenAbi,
    functionName: "allowance",
    args: account === undefined || intents === undefined ? undefined : [account, intents.originSettler],
    chainId: originChain.id,
    query: { enabled: account !== undefined && intents !== undefined && asset === "token" },
  });

  if (intents === undefined)
    return (
      <p className="error" role="alert">
        {words.missing}
      </p>
    );

  const quote = amount === undefined ? undefined : fastQuote(amount, intents.feeBps);
  const name = ASSET_NAMES[asset];
  // A withdrawal's fill waits for L1 blocks; a deposit's for the L2's, which come at least as often (the devnet's
  // and the live rollup's every 2 s): said in L1 block times either way, an upper bound for a deposit.
  const blockSeconds = config.l1.blockSeconds;
  const fillBlocks = `${CHAIN_LABELS[destinationKey]} blocks`;
  const soon = `${FAST_FILL_BLOCKS.min}–${FAST_FILL_BLOCKS.max} ${fillBlocks} (about ${formatDuration(FAST_FILL_BLOCKS.min * blockSeconds)} to ${formatDuration(FAST_FILL_BLOCKS.max * blockSeconds)})`;
  const standard =
    direction === "deposit"
      ? "when the L2 takes the deposit in, a few minutes live, with no more transactions of yours"
      : challengePeriod === undefined
        ? "after the challenge period, with two more transactions of yours on L1"
        : `after the challenge period (${formatDuration(challengePeriod)} on this network), with two more transactions of yours on L1`;
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
    const clients = intentClients(wagmiConfig, settings);
    const [destinationLatest, originLatest, maxFillPeriod] = await Promise.all([
      clients[destinationKey].getBlock({ blockTag: "latest" }),
      clients[originKey].getBlock({ blockTag: "latest" }),
      clients[originKey].readContract({ address: intents.originSettler, abi: originSettlerAbi, functionName: "MAX_FILL_PERIOD" }),
    ]);
    const fillDeadline = fastFillDeadline({
      destinationTime: destinationLatest.timestamp,
      originTime: originLatest.timestamp,
      maxFillPeriod,
    });
    const tokens = orderTokens(asset, config, direction);
    const orderData = encodeOrderData({
      inputToken: tokens.input,
      inputAmount: amount!,
      outputToken: tokens.output,
      outputAmount: quote!.output,
      recipient: account!,
      destinationChainId: BigInt(destinationChain.id),
    });
    return writeChecked(wagmiConfig, {
      address: intents.originSettler,
      abi: originSettlerAbi,
      functionName: "open",
      args: [{ fillDeadline, orderDataType: ORDER_DATA_TYPE, orderData }],
      value: asset === "eth" ? amount! : 0n,
      chainId: originChain.id,
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
            A solver pays you the amount less a {formatBps(intents.feeBps)} fee on {destinationChain.name} within {soon} of your order;{" "}
            {words.standard} {standard}.
          </>
        ) : (
          <>
            You receive <strong>{formatAmount(quote.output, 18, 18)}</strong> {name} on {destinationChain.name}, fee{" "}
            <strong>{formatAmount(quote.fee, 18, 18)}</strong> {name} ({formatBps(intents.feeBps)}), paid by a solver within {soon};{" "}
            {words.standard} {standard}.
          </>
        )}{" "}
        The fee is {feeSource}.
        {asset === "eth" &&
          " An ETH order's fee must also cover the solver's gas on both chains: a small one may go unfilled, and is refunded after its deadline."}
      </p>
      {showApproval && (
        <>
          <p className="hint">
            Step 1 of 2: allow the intent settler to escrow {formatAmount(amount ?? 0n)} of your primary token on {CHAIN_WORDS[originKey]}.
          </p>
          <TxButton
            chainId={originChain.id}
            variant="secondary"
            disabled={!needsApproval}
            disabledReason="Approved: the settler may escrow this amount."
            onMined={() => setApproved(amount)}
            send={() =>
              writeChecked(wagmiConfig, {
                address: config.contracts[originKey].PrimaryToken,
                abi: primaryTokenAbi,
                functionName: "approve",
                args: [intents.originSettler, amount],
                chainId: originChain.id,
                account: account!,
              })
            }
          >
            Approve
          </TxButton>
        </>
      )}
      <TxButton chainId={originChain.id} send={send} onMined={whenOpened} disabled={reason !== undefined} disabledReason={reason}>
        {words.action}
      </TxButton>
      {opened !== undefined && (
        <p className="success" data-testid="fast-opened" data-order-id={opened.orderId}>
          Order opened: {formatAmount(opened.output)} {ASSET_NAMES[opened.asset]} to be paid on {CHAIN_WORDS[destinationKey]}. Follow it
          under {words.list} below.
        </p>
      )}
    </>
  );
}
