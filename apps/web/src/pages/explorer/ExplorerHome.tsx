import { useQuery } from "@tanstack/react-query";
import type { Block, Transaction } from "viem";

import { DataTable, type Column } from "../../components/DataTable";
import { HexLink, explorerPaths } from "../../components/ExplorerLink";
import { contractAt, type ChainKey } from "../../explorer/abis";
import { decodeInput } from "../../explorer/decode";
import { formatAmount, formatTime } from "../../lib/format";
import { Link } from "react-router";
import { Addr, isDeposit, Loaded } from "./parts";
import { useExplorer } from "./useExplorer";

/** The chains move every 2 s: the lists follow. */
const REFRESH_MS = 2_000;
const BLOCKS_SHOWN = 6;
const TRANSACTIONS_SHOWN = 10;

type FullBlock = Block<bigint, true>;

/** The method a transaction calls, by name when an ABI knows its selector. */
export function useMethodName(chain: ChainKey) {
  const { known } = useExplorer();
  return (tx: Transaction) => {
    if (tx.to === null) return "Contract creation";
    if (tx.input === "0x") return "Transfer";
    if (isDeposit(tx)) return "Deposit";
    return decodeInput(tx.input, contractAt(known, chain, tx.to)?.abi)?.name ?? tx.input.slice(0, 10);
  };
}

/** The columns of a list of transactions: hash, method, from, to, value. */
export function transactionColumns(chain: ChainKey, method: (tx: Transaction) => string): Array<Column<Transaction>> {
  return [
    { header: "Transaction", rowHeader: true, cell: (tx) => <HexLink chain={chain} kind="tx" value={tx.hash} /> },
    { header: "Method", cell: (tx) => method(tx) },
    { header: "From", cell: (tx) => <Addr chain={chain} address={tx.from} /> },
    { header: "To", cell: (tx) => <Addr chain={chain} address={tx.to} /> },
    { header: "Value (ETH)", cell: (tx) => formatAmount(tx.value) },
  ];
}

/** A chain's latest blocks with their transactions, read again every 2 s. */
function useLatest(chain: ChainKey) {
  const { clients } = useExplorer();
  return useQuery({
    queryKey: ["explorer", "latest", chain],
    refetchInterval: REFRESH_MS,
    queryFn: async (): Promise<FullBlock[]> => {
      const head = await clients[chain].getBlockNumber();
      const numbers = Array.from({ length: BLOCKS_SHOWN }, (_, index) => head - BigInt(index)).filter((number) => number >= 0n);
      return Promise.all(numbers.map((blockNumber) => clients[chain].getBlock({ blockNumber, includeTransactions: true })));
    },
  });
}

function LatestOf({ chain, latest }: { chain: ChainKey; latest: ReturnType<typeof useLatest> }) {
  const { chainName } = useExplorer();
  const method = useMethodName(chain);
  const blockColumns: Array<Column<FullBlock>> = [
    {
      header: "Block",
      rowHeader: true,
      cell: (block) => <Link to={explorerPaths.block(chain, block.number!)}>{block.number!.toString()}</Link>,
    },
    { header: "Time", cell: (block) => formatTime(block.timestamp) },
    { header: "Transactions", cell: (block) => block.transactions.length },
    { header: "Gas used", cell: (block) => block.gasUsed.toLocaleString("en-US") },
  ];
  const txColumns = transactionColumns(chain, method);
  return (
    <section aria-labelledby={`latest-${chain}`}>
      <h2 id={`latest-${chain}`}>{chainName(chain)}</h2>
      <Loaded query={latest} what={`the latest blocks of ${chainName(chain)}`}>
        {(blocks) => (
          <>
            <DataTable
              caption={`Latest blocks of ${chainName(chain)}`}
              columns={blockColumns}
              rows={blocks}
              rowKey={(block) => block.hash!}
              rowProps={() => ({ "data-testid": `latest-block-${chain}` })}
            />
            <DataTable
              caption={`Latest transactions of ${chainName(chain)}`}
              columns={txColumns}
              rows={blocks.flatMap((block) => block.transactions).slice(0, TRANSACTIONS_SHOWN)}
              rowKey={(tx) => tx.hash}
              rowProps={() => ({ "data-testid": `latest-tx-${chain}` })}
              empty="No transactions in these blocks."
            />
          </>
        )}
      </Loaded>
    </section>
  );
}

/** The explorer's front page: both chains' latest blocks and transactions, live. */
export function ExplorerHome() {
  return (
    <>
      <p className="hint">
        See also the <Link to={explorerPaths.attestations}>recorded attestations</Link>.
      </p>
      <LatestBoth />
    </>
  );
}

/**
 * Both chains' lists, shown together once both have been read (or have failed): on a phone they are one above
 * the other, and the L1's, shown first, would be moved down by the L2's as it arrived.
 */
function LatestBoth() {
  const l2 = useLatest("l2");
  const l1 = useLatest("l1");
  if (l2.isPending || l1.isPending) return <p role="status">Loading the latest blocks…</p>;
  return (
    <div className="grid explorer-latest">
      <LatestOf chain="l2" latest={l2} />
      <LatestOf chain="l1" latest={l1} />
    </div>
  );
}
