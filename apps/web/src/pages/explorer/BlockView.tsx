import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "react-router";

import { DataTable } from "../../components/DataTable";
import { explorerPaths } from "../../components/ExplorerLink";
import { formatAmount, formatTime } from "../../lib/format";
import { transactionColumns, useMethodName } from "./ExplorerHome";
import { Addr, Fact, Loaded } from "./parts";
import { chainParam, useExplorer } from "./useExplorer";

/** `/explorer/<l1|l2>/block/<number>`: a block's facts and its transactions. */
export function BlockView() {
  const params = useParams();
  const chain = chainParam(params.chain);
  const number = /^\d+$/.test(params.number ?? "") ? BigInt(params.number!) : undefined;
  const { clients, chainName } = useExplorer();
  const method = useMethodName(chain ?? "l2");
  const block = useQuery({
    queryKey: ["explorer", "block", chain, number?.toString()],
    enabled: chain !== undefined && number !== undefined,
    queryFn: () => clients[chain!].getBlock({ blockNumber: number!, includeTransactions: true }),
    // A block not mined yet is retried until it is.
    retry: (count) => count < 30,
  });
  if (chain === undefined || number === undefined) return <h1>Not a block: {params.number}</h1>;

  const columns = transactionColumns(chain, method);
  return (
    <>
      <h1>
        Block {number.toString()} on {chainName(chain)}
      </h1>
      <Loaded query={block} what="the block">
        {(data) => (
          <>
            <dl className="facts">
              <Fact term="Hash">
                <code>{data.hash}</code>
              </Fact>
              <Fact term="Parent">
                {number > 0n ? (
                  <Link to={explorerPaths.block(chain, number - 1n)}>Block {(number - 1n).toString()}</Link>
                ) : (
                  "none (genesis)"
                )}
                {" · "}
                <Link to={explorerPaths.block(chain, number + 1n)}>Block {(number + 1n).toString()}</Link>
              </Fact>
              <Fact term="Time">{formatTime(data.timestamp)}</Fact>
              <Fact term="Gas used">
                {data.gasUsed.toLocaleString("en-US")} of {data.gasLimit.toLocaleString("en-US")}
              </Fact>
              <Fact term="Base fee">{data.baseFeePerGas === null ? "—" : `${formatAmount(data.baseFeePerGas, 9, 6)} gwei`}</Fact>
              <Fact term="Fee recipient">
                <Addr chain={chain} address={data.miner} />
              </Fact>
            </dl>
            <h2>Transactions</h2>
            <DataTable
              caption={`Transactions of block ${number}`}
              columns={columns}
              rows={data.transactions}
              rowKey={(tx) => tx.hash}
              rowProps={() => ({ "data-testid": "block-tx" })}
              empty="This block holds no transactions."
            />
          </>
        )}
      </Loaded>
    </>
  );
}
