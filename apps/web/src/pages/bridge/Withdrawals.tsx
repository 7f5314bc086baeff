import { useQuery } from "@tanstack/react-query";
import type { Address, Hash } from "viem";
import { useConfig } from "wagmi";

import { HexLink } from "../../components/ExplorerLink";
import { useAppSettings, type AppSettings } from "../../app-context";
import { DataTable, type Column } from "../../components/DataTable";
import { TxButton } from "../../components/TxButton";
import { l2StandardBridgeAbi } from "../../generated/abis";
import { describeError } from "../../lib/errors";
import { formatAmount, formatDuration, shortAddress } from "../../lib/format";
import { L2_STANDARD_BRIDGE, LEGACY_ETH, opPublicClients, opTargetChain, opWalletL1 } from "./shared";
import { narrowToWithdrawal, readWithdrawalStatus, STATUS_REFRESH_MS } from "./withdrawal-status";

const LIST_REFRESH_MS = 15_000;

interface WithdrawalStart {
  l2Hash: Hash;
  /** The `WithdrawalInitiated` log's index in its block: tells several withdrawals of one transaction apart. */
  logIndex: number;
  l2Block: bigint;
  l2Token: Address;
  amount: bigint;
}

/**
 * The connected account's withdrawals, found from chain data alone (the L2 bridge's `WithdrawalInitiated`
 * events by `from`, an indexed argument), so a reload or another device shows the same list.
 */
export function Withdrawals({ account }: { account: Address }) {
  const wagmiConfig = useConfig();
  const settings = useAppSettings();
  const { config, chains } = settings;
  const list = useQuery({
    queryKey: ["bridge", "withdrawals", chains.l2.id, account],
    refetchInterval: LIST_REFRESH_MS,
    queryFn: async (): Promise<WithdrawalStart[]> => {
      const logs = await opPublicClients(wagmiConfig, settings).l2.getContractEvents({
        address: L2_STANDARD_BRIDGE,
        abi: l2StandardBridgeAbi,
        eventName: "WithdrawalInitiated",
        args: { from: account },
        fromBlock: BigInt(config.l2.fromBlock),
        toBlock: "latest",
      });
      return logs
        .map((log) => ({
          l2Hash: log.transactionHash,
          logIndex: log.logIndex,
          l2Block: log.blockNumber,
          l2Token: log.args.l2Token!,
          amount: log.args.amount!,
        }))
        .reverse(); // newest first
    },
  });

  const columns: Array<Column<WithdrawalStart>> = [
    {
      header: "Started on L2",
      cell: (start) => (
        <>
          <HexLink chain="l2" kind="tx" value={start.l2Hash} />
          <br />
          <span className="hint">block {start.l2Block.toString()}</span>
        </>
      ),
    },
    { header: "Asset", cell: (start) => assetName(start.l2Token, settings) },
    { header: "Amount", cell: (start) => formatAmount(start.amount) },
    // The two cells follow one withdrawal's progress: the same queries, shared by key.
    { header: "Status", cell: (start) => <WithdrawalStatus start={start} />, cellProps: () => ({ "data-testid": "withdrawal-status" }) },
    { header: "Next step", cell: (start) => <WithdrawalAction start={start} /> },
  ];

  return (
    <section aria-labelledby="withdrawals-heading">
      <h2 id="withdrawals-heading">Withdrawals</h2>
      <p className="hint">
        A withdrawal takes three steps: start it on L2, prove it on L1 once the L2 state root that includes it is posted there, and finalize
        it on L1 after the challenge period.
      </p>
      {list.isPending ? (
        <p role="status">Loading your withdrawals…</p>
      ) : list.isError ? (
        <p className="error" role="alert">
          Could not load your withdrawals: {describeError(list.error)}
        </p>
      ) : (
        <DataTable
          caption="Your withdrawals"
          columns={columns}
          rows={list.data}
          rowKey={(start) => `${start.l2Hash}-${start.logIndex}`}
          rowProps={() => ({ "data-testid": "withdrawal" })}
          empty="No withdrawals from this account yet."
        />
      )}
    </section>
  );
}

function assetName(token: Address, { config }: AppSettings): string {
  if (token.toLowerCase() === LEGACY_ETH.toLowerCase()) return "ETH";
  if (token.toLowerCase() === config.contracts.l2.PrimaryToken.toLowerCase()) return "Primary token";
  return `Token ${shortAddress(token)}`;
}

/** Where a withdrawal stands, in words, and the transaction that takes it to its next step (if it is the user's turn). */
function useWithdrawalStep(start: WithdrawalStart): { words: string; action: React.ReactNode } {
  const wagmiConfig = useConfig();
  const settings = useAppSettings();
  const { chains } = settings;

  // The L2 receipt narrowed to this withdrawal's message: viem's status and prove actions read the first
  // withdrawal of a receipt, and one transaction may start several.
  const message = useQuery({
    queryKey: ["bridge", "withdrawal-message", chains.l2.id, start.l2Hash, start.logIndex],
    staleTime: Infinity,
    queryFn: async () => {
      const receipt = await opPublicClients(wagmiConfig, settings).l2.getTransactionReceipt({ hash: start.l2Hash });
      return narrowToWithdrawal(receipt, start.logIndex);
    },
  });

  const status = useQuery({
    queryKey: ["bridge", "withdrawal-status", chains.l2.id, start.l2Hash, start.logIndex],
    enabled: message.data !== undefined,
    refetchInterval: (query) => (query.state.data?.status === "finalized" ? false : STATUS_REFRESH_MS),
    queryFn: () => readWithdrawalStatus(wagmiConfig, settings, message.data!),
  });

  const refresh = () => void status.refetch();
  let words: string;
  let action: React.ReactNode = <span className="hint">Nothing to do yet.</span>;
  if (message.isError) words = `Could not read the L2 transaction: ${describeError(message.error)}`;
  // A failed refresh keeps the last status known (and its action): only a status never read is an error.
  else if (status.data === undefined) words = status.isError ? `Could not read the status: ${describeError(status.error)}` : "Checking…";
  else {
    const { receipt, withdrawal } = message.data!;
    switch (status.data.status) {
      case "waiting-to-prove":
        words = "Waiting for the state root";
        break;
      case "ready-to-prove":
        words = "Ready to prove";
        action = (
          <TxButton
            chainId={chains.l1.id}
            onMined={refresh}
            send={async () => {
              const { l1, l2 } = opPublicClients(wagmiConfig, settings);
              const targetChain = opTargetChain(settings);
              // The status says the output is posted, so this returns at once with it.
              const { output } = await l1.waitToProve({ receipt, targetChain });
              const proof = await l2.buildProveWithdrawal({ output, withdrawal });
              const wallet = await opWalletL1(wagmiConfig, settings);
              return wallet.proveWithdrawal({ ...proof, targetChain, account: wallet.account, chain: chains.l1 });
            }}
          >
            Prove
          </TxButton>
        );
        break;
      case "waiting-to-finalize":
        words = `In the challenge period: ${formatDuration(status.data.secondsLeft ?? 0)} left`;
        break;
      case "ready-to-finalize":
        words = "Ready to finalize";
        action = (
          <TxButton
            chainId={chains.l1.id}
            onMined={refresh}
            send={async () => {
              const wallet = await opWalletL1(wagmiConfig, settings);
              return wallet.finalizeWithdrawal({
                withdrawal,
                targetChain: opTargetChain(settings),
                account: wallet.account,
                chain: chains.l1,
              });
            }}
          >
            Finalize
          </TxButton>
        );
        break;
      case "finalized":
        words = "Done";
        action = <span>Funds are on L1.</span>;
        break;
    }
  }

  return { words, action };
}

function WithdrawalStatus({ start }: { start: WithdrawalStart }) {
  return <>{useWithdrawalStep(start).words}</>;
}

function WithdrawalAction({ start }: { start: WithdrawalStart }) {
  return <>{useWithdrawalStep(start).action}</>;
}
