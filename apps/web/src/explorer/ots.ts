import {
  formatTransaction,
  formatTransactionReceipt,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
  type Transaction,
  type TransactionReceipt,
} from "viem";

/**
 * The Otterscan JSON-RPC namespace (`ots_*`), which anvil serves (API level 8 in anvil 1.7.1) and most
 * hosted OP endpoints do not. The explorer uses it for what plain JSON-RPC cannot answer without an
 * index: an address's history and a failed transaction's revert data.
 */
type Request = (args: { method: string; params: unknown[] }) => Promise<unknown>;

const call = (client: PublicClient, method: string, params: unknown[]) => (client.request as unknown as Request)({ method, params });

/** The API level of the node's `ots_` namespace, or undefined when it does not serve it. */
export async function otsApiLevel(client: PublicClient): Promise<number | undefined> {
  try {
    const level = await call(client, "ots_getApiLevel", []);
    return typeof level === "number" ? level : undefined;
  } catch {
    return undefined;
  }
}

export interface HistoryPage {
  transactions: Array<{ transaction: Transaction; receipt: TransactionReceipt; timestamp?: bigint }>;
  /** The page reaches the address's newest transaction / its oldest one. */
  firstPage: boolean;
  lastPage: boolean;
}

interface RawHistory {
  txs: unknown[];
  receipts: Array<Record<string, unknown>>;
  firstPage: boolean;
  lastPage: boolean;
}

/**
 * A page of `address`'s transactions (sent, received, or touching it inside a call, as Otterscan's index
 * finds them), newest first, before block `before` (0: from the newest).
 */
export async function historyBefore(client: PublicClient, address: Address, before: bigint, pageSize = 25): Promise<HistoryPage> {
  const raw = (await call(client, "ots_searchTransactionsBefore", [address, Number(before), pageSize])) as RawHistory;
  return {
    transactions: raw.txs.map((tx, index) => {
      const receipt = raw.receipts[index];
      return {
        transaction: formatTransaction(tx as never),
        receipt: formatTransactionReceipt(receipt),
        timestamp: receipt.timestamp === undefined ? undefined : BigInt(receipt.timestamp as string | number),
      };
    }),
    firstPage: raw.firstPage,
    lastPage: raw.lastPage,
  };
}

/** The revert data of a failed transaction (`0x` when it reverted without data). */
export async function transactionError(client: PublicClient, hash: Hash): Promise<Hex> {
  return (await call(client, "ots_getTransactionError", [hash])) as Hex;
}
