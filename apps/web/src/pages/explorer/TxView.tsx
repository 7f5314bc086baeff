import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";
import { BaseError, isHash, type Hash, type Hex, type Log, type PublicClient, type Transaction, type TransactionReceipt } from "viem";
import { chainConfig, extractWithdrawalMessageLogs, getL2TransactionHashes } from "viem/op-stack";
import { useConfig } from "wagmi";

import { useAppSettings } from "../../app-context";
import { HexLink, explorerPaths } from "../../components/ExplorerLink";
import { contractAt, type ChainKey } from "../../explorer/abis";
import { decodedText, decodeInput, decodeLog, decodeRevert } from "../../explorer/decode";
import { transactionError } from "../../explorer/ots";
import { humanizeErrorName } from "../../lib/errors";
import { formatAmount, formatDuration, formatTime } from "../../lib/format";
import { narrowToWithdrawal, readWithdrawalStatus, STATUS_REFRESH_MS, type WithdrawalState } from "../bridge/withdrawal-status";
import { IntentOrders } from "./IntentOrders";
import { Addr, DecodedView, Fact, isDeposit, Loaded } from "./parts";
import { chainParam, useExplorer, useOts } from "./useExplorer";

const MESSAGE_PASSER = chainConfig.contracts.l2ToL1MessagePasser.address.toLowerCase();

interface TxData {
  tx: Transaction;
  /** Null while the transaction waits to be mined. */
  receipt: TransactionReceipt | null;
  timestamp?: bigint;
}

/** `/explorer/<l1|l2>/tx/<hash>`: status, gas and fees, decoded input, events and revert reason, bridge messages. */
export function TxView() {
  const params = useParams();
  const chain = chainParam(params.chain);
  const hash = isHash(params.hash ?? "") ? (params.hash as Hash) : undefined;
  const { clients, chainName } = useExplorer();
  const data = useQuery({
    queryKey: ["explorer", "tx", chain, hash],
    enabled: chain !== undefined && hash !== undefined,
    refetchInterval: (query) => (query.state.data !== undefined && query.state.data.receipt === null ? 2_000 : false),
    // A transaction just sent may not be known yet: retried for a while.
    retry: (count) => count < 15,
    queryFn: async (): Promise<TxData> => {
      const client = clients[chain!];
      const tx = await client.getTransaction({ hash: hash! });
      const receipt = await client.getTransactionReceipt({ hash: hash! }).catch(() => null);
      const block = receipt === null ? undefined : await client.getBlock({ blockNumber: receipt.blockNumber });
      return { tx, receipt, timestamp: block?.timestamp };
    },
  });
  if (chain === undefined || hash === undefined) return <h1>Not a transaction hash: {params.hash}</h1>;
  return (
    <>
      <h1>Transaction on {chainName(chain)}</h1>
      <p>
        <code>{hash}</code>
      </p>
      <Loaded query={data} what="the transaction">
        {(loaded) => <TxDetails chain={chain} {...loaded} />}
      </Loaded>
    </>
  );
}

function TxDetails({ chain, tx, receipt, timestamp }: { chain: ChainKey } & TxData) {
  const { known } = useExplorer();
  const target = contractAt(known, chain, tx.to);
  const input = decodeInput(tx.input, target?.abi);
  const status = receipt === null ? "Pending" : receipt.status === "success" ? "Success" : "Failed";
  const fee = receipt === null ? undefined : receipt.gasUsed * receipt.effectiveGasPrice;
  const l1Fee = (receipt as { l1Fee?: bigint | null } | null)?.l1Fee;
  return (
    <>
      <dl className="facts">
        <Fact term="Status" testId="tx-status">
          <span className={status === "Success" ? "success" : status === "Failed" ? "error" : undefined}>{status}</span>
        </Fact>
        {receipt?.status === "reverted" && (
          <Fact term="Revert reason" testId="revert-reason">
            <RevertReason chain={chain} tx={tx} receipt={receipt} />
          </Fact>
        )}
        <Fact term="Block">
          {receipt === null ? (
            "not mined yet"
          ) : (
            <Link to={explorerPaths.block(chain, receipt.blockNumber)}>{receipt.blockNumber.toString()}</Link>
          )}
          {timestamp !== undefined && ` · ${formatTime(timestamp)}`}
        </Fact>
        <Fact term="Type">{isDeposit(tx) ? "Deposit from L1 (0x7e): no signature, no fee" : tx.type}</Fact>
        <Fact term="From">
          <Addr chain={chain} address={tx.from} full />
        </Fact>
        <Fact term={tx.to === null ? "Created" : "To"}>
          <Addr chain={chain} address={tx.to ?? receipt?.contractAddress} full />
        </Fact>
        <Fact term="Value">{formatAmount(tx.value, 18, 18)} ETH</Fact>
        <Fact term="Nonce">{isDeposit(tx) ? "—" : tx.nonce}</Fact>
        <Fact term="Gas">
          {receipt === null ? "—" : `${receipt.gasUsed.toLocaleString("en-US")} used of ${tx.gas.toLocaleString("en-US")}`}
        </Fact>
        <Fact term="Gas price">{receipt === null ? "—" : `${formatAmount(receipt.effectiveGasPrice, 9, 9)} gwei`}</Fact>
        <Fact term="Fee" testId="tx-fee">
          {fee === undefined ? "—" : `${formatAmount(fee, 18, 18)} ETH`}
        </Fact>
        {chain === "l2" && (
          <Fact term="L1 data fee" testId="l1-fee">
            {l1Fee !== undefined && l1Fee !== null && l1Fee > 0n
              ? `${formatAmount(l1Fee, 18, 18)} ETH (part of what the sender paid for posting the transaction to L1)`
              : "None: the receipt carries no L1 data fee (this devnet charges none)"}
          </Fact>
        )}
      </dl>

      <h2>Input</h2>
      {tx.input === "0x" ? (
        <p>No input: a plain transfer.</p>
      ) : input !== undefined ? (
        <div data-testid="decoded-input">
          <DecodedView chain={chain} decoded={input} />
        </div>
      ) : (
        <p>
          Not decoded (no known ABI has selector <code>{tx.input.slice(0, 10)}</code>): <code className="raw">{tx.input}</code>
        </p>
      )}

      {receipt !== null && chain === "l1" && <DepositMessages receipt={receipt} />}
      {receipt !== null && chain === "l2" && <WithdrawalMessages receipt={receipt} />}
      <IntentOrders chain={chain} tx={tx} logs={receipt?.logs} />

      {receipt !== null && (
        <>
          <h2>Events ({receipt.logs.length})</h2>
          {receipt.logs.length === 0 ? (
            <p>{receipt.status === "reverted" ? "None: a failed transaction leaves no events." : "None."}</p>
          ) : (
            <ol className="events">
              {receipt.logs.map((log) => (
                <EventItem key={log.logIndex} chain={chain} log={log} />
              ))}
            </ol>
          )}
        </>
      )}
    </>
  );
}

function EventItem({ chain, log }: { chain: ChainKey; log: Log }) {
  const { known } = useExplorer();
  const decoded = decodeLog(log, contractAt(known, chain, log.address)?.abi);
  return (
    <li data-testid="tx-event" data-event={decoded?.name ?? "unknown"}>
      <p>
        Emitted by <Addr chain={chain} address={log.address} />
      </p>
      {decoded !== undefined ? (
        <DecodedView chain={chain} decoded={decoded} />
      ) : (
        <p>
          Not decoded: topics <code>{log.topics.join(", ")}</code>, data <code className="raw">{log.data}</code>
        </p>
      )}
    </li>
  );
}

/** The revert data of a failed transaction: by `ots_getTransactionError`, else by replaying it on the state before its block. */
async function revertData(
  client: PublicClient,
  tx: Transaction,
  receipt: TransactionReceipt,
  ots: boolean,
): Promise<{ data: Hex; replayed: boolean }> {
  if (ots) return { data: await transactionError(client, tx.hash), replayed: false };
  try {
    await client.call({
      account: tx.from,
      to: tx.to,
      data: tx.input,
      value: tx.value,
      gas: tx.gas,
      blockNumber: receipt.blockNumber - 1n,
    });
    return { data: "0x", replayed: true };
  } catch (error) {
    const withData = error instanceof BaseError ? error.walk((cause) => typeof (cause as { data?: unknown }).data === "string") : null;
    return { data: (withData as { data?: Hex } | null)?.data ?? "0x", replayed: true };
  }
}

function RevertReason({ chain, tx, receipt }: { chain: ChainKey; tx: Transaction; receipt: TransactionReceipt }) {
  const { clients, known } = useExplorer();
  const ots = useOts(chain);
  const reason = useQuery({
    queryKey: ["explorer", "revert", chain, tx.hash],
    enabled: ots.data !== undefined,
    staleTime: Infinity,
    queryFn: () => revertData(clients[chain], tx, receipt, ots.data !== null),
  });
  if (reason.data === undefined) return <>{reason.isError ? "Could not read the revert data." : "Reading…"}</>;
  const decoded = decodeRevert(reason.data.data, contractAt(known, chain, tx.to)?.abi);
  const how = reason.data.replayed
    ? " (replayed on the state before its block: this node has no ots_getTransactionError, so an earlier transaction of the same block may have changed the outcome)"
    : "";
  if (decoded === undefined)
    return (
      <>
        {reason.data.data === "0x" ? "Reverted without a reason" : <code>{reason.data.data}</code>}
        {how}
      </>
    );
  const words =
    decoded.name === "Error" ? String(decoded.args[0]?.value) : decoded.name === "Panic" ? "panic" : humanizeErrorName(decoded.name);
  return (
    <>
      <code data-testid="revert-error">{decodedText(decoded)}</code>: {words}
      {how}
      <DecodedView chain={chain} decoded={decoded} />
    </>
  );
}

/** A deposit's L2 transactions (one per `TransactionDeposited` of the portal), linked, and whether each has arrived. */
function DepositMessages({ receipt }: { receipt: TransactionReceipt }) {
  const { config } = useAppSettings();
  const portal = config.contracts.l1.OptimismPortal.toLowerCase();
  const deposits = receipt.logs.filter((log) => log.address.toLowerCase() === portal);
  if (deposits.length === 0) return null;
  const l2Hashes = getL2TransactionHashes({ logs: deposits });
  return (
    <section aria-labelledby="deposit-heading">
      <h2 id="deposit-heading">Deposit to L2</h2>
      <ul>
        {l2Hashes.map((l2Hash) => (
          <li key={l2Hash} data-testid="deposit-l2">
            <DepositArrival l2Hash={l2Hash} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function DepositArrival({ l2Hash }: { l2Hash: Hash }) {
  const { clients } = useExplorer();
  const arrived = useQuery({
    queryKey: ["explorer", "deposit-arrival", l2Hash],
    refetchInterval: (query) => (query.state.data == null ? 2_000 : false),
    queryFn: async () => (await clients.l2.getTransactionReceipt({ hash: l2Hash }).catch(() => null))?.blockNumber ?? null,
  });
  return (
    <>
      L2 transaction <HexLink chain="l2" kind="tx" value={l2Hash} full />:{" "}
      <span data-testid="deposit-state">{arrived.data == null ? "not on L2 yet" : `arrived in L2 block ${arrived.data}`}</span>
    </>
  );
}

const WITHDRAWAL_WORDS: Record<WithdrawalState["status"], string> = {
  "waiting-to-prove": "Waiting for its output root on L1",
  "ready-to-prove": "Ready to prove",
  "waiting-to-finalize": "Proven: in the challenge period",
  "ready-to-finalize": "Ready to finalize",
  finalized: "Finalized",
};

/** Each withdrawal message the transaction sent (`MessagePassed`), with where it stands on L1. */
function WithdrawalMessages({ receipt }: { receipt: TransactionReceipt }) {
  const messages = extractWithdrawalMessageLogs({ logs: receipt.logs }).filter((log) => log.address.toLowerCase() === MESSAGE_PASSER);
  if (messages.length === 0) return null;
  return (
    <section aria-labelledby="withdrawal-heading">
      <h2 id="withdrawal-heading">Withdrawal to L1</h2>
      <p className="hint">
        A withdrawal is proven on L1 once an output root that includes it is posted, then finalized after the challenge period. The{" "}
        <Link to="/bridge">Bridge</Link> page proves and finalizes the connected wallet&apos;s.
      </p>
      <ul>
        {messages.map((log) => (
          <li key={log.logIndex} data-testid="withdrawal">
            <WithdrawalState receipt={receipt} messageLogIndex={log.logIndex} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function WithdrawalState({ receipt, messageLogIndex }: { receipt: TransactionReceipt; messageLogIndex: number }) {
  const wagmiConfig = useConfig();
  const settings = useAppSettings();
  // `narrowToWithdrawal` takes the first message after an event's index: the one just before this message.
  const message = narrowToWithdrawal(receipt, messageLogIndex - 1);
  const state = useQuery({
    queryKey: ["explorer", "withdrawal", receipt.transactionHash, messageLogIndex],
    refetchInterval: (query) => (query.state.data?.status === "finalized" ? false : STATUS_REFRESH_MS),
    queryFn: () => readWithdrawalStatus(wagmiConfig, settings, message),
  });
  return (
    <>
      Withdrawal <code title={message.withdrawal.withdrawalHash}>{message.withdrawal.withdrawalHash}</code>:{" "}
      <span data-testid="withdrawal-state">
        {state.data === undefined
          ? state.isError
            ? "could not read its state"
            : "checking…"
          : state.data.status === "waiting-to-finalize"
            ? `${WITHDRAWAL_WORDS[state.data.status]}, ${formatDuration(state.data.secondsLeft ?? 0)} left`
            : WITHDRAWAL_WORDS[state.data.status]}
      </span>
    </>
  );
}
