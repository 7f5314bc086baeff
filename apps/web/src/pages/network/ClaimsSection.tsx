import { useQueries, useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import type { Address, PublicClient } from "viem";
import { useConfig, useConnection, useReadContract, useReadContracts } from "wagmi";

import { useAppSettings } from "../../app-context";
import { DataTable } from "../../components/DataTable";
import { TxButton } from "../../components/TxButton";
import { nodeRegistryAbi, rewardPoolsAbi, verificationRegistryAbi } from "../../generated/abis";
import { useOwnedLicenses } from "../../hooks/useOwnedLicenses";
import { describeError } from "../../lib/errors";
import { formatAmount, formatBps } from "../../lib/format";
import { simulateAndWrite } from "../../lib/transactions";
import {
  claimStep,
  computeSettlement,
  epochsWithPools,
  holdsEpoch,
  payoutsByLicense,
  settlementStatus,
  updatePoolEvents,
  type ComputedSettlement,
  type PoolEvents,
  type SettlementState,
} from "./settlements";
import { useEpochQos } from "./useEpochQos";

/** Fees accrue as jobs finalize, so the figures re-read every few seconds. */
const REFRESH = { refetchInterval: 5_000 } as const;

/** The connected wallet's licenses' scores, job fees and epoch rewards, with the transactions that claim them. */
export function ClaimsSection({ client }: { client: PublicClient }) {
  const { config } = useAppSettings();
  const { address } = useConnection();
  const { licenseIds, error } = useOwnedLicenses(address);
  const rewardPools = config.contracts.l2.RewardPools;

  // A page that only reads says nothing about wallets: without one, this part is not there.
  if (address === undefined) return null;
  return (
    <section aria-labelledby="claims-heading" className="panel">
      <h2 id="claims-heading">Your scores, fees and rewards</h2>
      {error !== null ? (
        <p className="error" role="alert">
          Could not read your licenses: {describeError(error)}
        </p>
      ) : licenseIds === undefined ? (
        <p role="status">Loading your licenses…</p>
      ) : licenseIds.length === 0 ? (
        <p className="hint">This wallet holds no license.</p>
      ) : (
        <>
          <Scores licenseIds={licenseIds} client={client} rewardPools={rewardPools} />
          <Fees licenseIds={licenseIds} />
          <h3>Epoch rewards</h3>
          {rewardPools === undefined ? (
            <p className="hint" data-testid="rewards-not-deployed">
              Epoch rewards are not deployed on this network: its configuration names no RewardPools contract.
            </p>
          ) : (
            <Rewards licenseIds={licenseIds} client={client} rewardPools={rewardPools} />
          )}
        </>
      )}
    </section>
  );
}

/**
 * The wallet's licenses' score in the current epoch and the three before, from the same figures as the
 * Nodes section's table (one read shared by both), and what each would be paid of the current epoch's pool
 * were the epoch to end now: the pool split by every license's points (its own agreeing votes) times its score.
 */
function Scores({ licenseIds, client, rewardPools }: { licenseIds: bigint[]; client: PublicClient; rewardPools: Address | undefined }) {
  const { chains } = useAppSettings();
  const qos = useEpochQos(client);
  const epochs = qos.data?.epochs ?? [];
  const current = epochs.find((epoch) => epoch.current);
  const settlement = useReadContract({
    address: rewardPools,
    abi: rewardPoolsAbi,
    chainId: chains.l2.id,
    functionName: "settlementOf",
    args: [BigInt(current?.frame.epoch ?? 0)],
    query: { ...REFRESH, enabled: rewardPools !== undefined && current !== undefined },
  });
  const pool = settlement.data?.pool;
  const figures = current?.figures;
  // Every license's figures count: a license's share is its weight of all licenses' weight.
  const payouts = useMemo(
    () => (figures === undefined || pool === undefined ? undefined : payoutsByLicense(figures.values(), pool)),
    [figures, pool],
  );

  return (
    <>
      <h3>Your licenses' score</h3>
      {qos.error !== null && (
        <p className="error" role="alert">
          Could not read the quality of service: {describeError(qos.error)}
        </p>
      )}
      {qos.data === undefined ? (
        qos.error === null && <p role="status">Loading your licenses' scores…</p>
      ) : (
        <DataTable
          caption="Your licenses' score per epoch (the Nodes section shows what each is made of)"
          columns={[
            { header: "License", rowHeader: true, cell: (id: bigint) => `#${id.toString()}` },
            ...epochs.map(({ frame, current, figures }) => ({
              header: `Epoch ${frame.epoch}${current ? " (current)" : ""}`,
              cell: (id: bigint) => {
                const figure = figures.get(id);
                return figure === undefined ? "Never delegated" : formatBps(figure.scoreBps);
              },
              cellProps: () => ({ "data-testid": "your-score", "data-epoch": frame.epoch, className: "figure" }),
            })),
            ...(rewardPools === undefined
              ? []
              : [
                  {
                    header: "Would earn now (staked tokens)",
                    cell: (id: bigint) => (payouts === undefined ? "…" : formatAmount(payouts.get(id) ?? 0n)),
                    cellProps: () => ({ "data-testid": "would-earn", className: "figure" }),
                  },
                ]),
          ]}
          rows={licenseIds}
          rowKey={(id) => id.toString()}
          rowProps={(id) => ({ "data-testid": "your-score-row", "data-license-id": id.toString() })}
        />
      )}
      {settlement.error !== null && (
        <p className="error" role="alert">
          Could not read this epoch's reward pool: {describeError(settlement.error)}
        </p>
      )}
      <p className="hint">
        The score is what epoch rewards are split by: a license's weight is its points in the epoch (its agreeing votes committed before the
        answer was revealed) times its score, and each license is paid the pool times its weight over all licenses' weight, rounded down.
        {rewardPools !== undefined &&
          (pool === undefined
            ? ' "Would earn now" applies that to the current epoch\'s pool, were the epoch to end now.'
            : ` "Would earn now" applies that to the current epoch's pool (${formatAmount(pool)} primary tokens, paid staked), were the epoch to end now.`)}
      </p>
    </>
  );
}

function Fees({ licenseIds }: { licenseIds: bigint[] }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const verification = { address: config.contracts.l2.VerificationRegistry, abi: verificationRegistryAbi, chainId: chains.l2.id } as const;
  const fees = useReadContracts({
    allowFailure: false,
    contracts: licenseIds.map((id) => ({ ...verification, functionName: "claimableFees", args: [id] }) as const),
    query: REFRESH,
  });
  const total = fees.data?.reduce((sum, fee) => sum + fee, 0n);
  // Only licenses with a credit: claiming one without is wasted gas (and a list of none reverts NothingToClaim).
  const withFees = licenseIds.filter((_, index) => (fees.data?.[index] ?? 0n) > 0n);

  return (
    <>
      <h3>Job fees</h3>
      {fees.error !== null && (
        <p className="error" role="alert">
          {describeError(fees.error)}
        </p>
      )}
      <p>
        Claimable: <span data-testid="claimable-fees">{total === undefined ? "…" : formatAmount(total)}</span> staked tokens
      </p>
      {fees.data !== undefined && (
        <DataTable
          caption="Claimable fees per license"
          columns={[
            { header: "License", cell: (row) => `#${row.id.toString()}` },
            { header: "Claimable (staked tokens)", cell: (row) => formatAmount(row.fee) },
          ]}
          rows={licenseIds.map((id, index) => ({ id, fee: fees.data[index] ?? 0n }))}
          rowKey={(row) => row.id.toString()}
        />
      )}
      <TxButton
        chainId={chains.l2.id}
        disabled={withFees.length === 0}
        disabledReason="No license of this wallet has fees to claim."
        send={() => simulateAndWrite(wagmiConfig, { ...verification, functionName: "claimFees", args: [withFees] })}
      >
        Claim fees
      </TxButton>
      <p className="hint">Fees are paid in staked tokens to the licenses' owner at claim time.</p>
    </>
  );
}

/** One ended epoch with a pool, and what the page knows of its settlement. */
interface RewardRow {
  epoch: bigint;
  state: SettlementState;
  settlement: { data: ComputedSettlement | undefined; error: Error | null; fetching: boolean; opened: boolean; held: boolean };
  /** Per license of the wallet (in `licenseIds`' order): whether its payout is claimed, undefined while unread. */
  claimed: Array<boolean | undefined>;
  /** The page's root's votes in the current round, while the nodes vote. */
  votes: bigint | undefined;
}

/**
 * Rewards of ended epochs (`RewardPools`). The epochs with a pool come from its funding and roll-over events,
 * their state from `settlementOf`. Each epoch's payouts are computed in the page as every node computes the
 * root it votes (`computeSettlement`), once the settlement has opened: the wallet's licenses' payouts, their
 * proofs, and whether the accepted root is that one. A claim is offered only when it is, and claims are open.
 */
function Rewards({ licenseIds, client, rewardPools }: { licenseIds: bigint[]; client: PublicClient; rewardPools: Address }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const pools = { address: rewardPools, abi: rewardPoolsAbi, chainId: chains.l2.id } as const;
  const fromBlock = BigInt(config.l2.fromBlock);
  const contracts = { nodeRegistry: config.contracts.l2.NodeRegistry, verificationRegistry: config.contracts.l2.VerificationRegistry };
  const qos = useEpochQos(client);
  const snapshot = qos.data?.snapshot;
  const current = qos.data?.epochs.find((epoch) => epoch.current)?.frame.epoch;
  // Epochs whose events the page no longer holds are read apart only when asked: an epoch's worth of blocks.
  const [readOlder, setReadOlder] = useState<ReadonlySet<string>>(new Set());

  const poolEvents = useQuery({
    queryKey: ["network", "reward-pools", rewardPools, config.l2.fromBlock],
    queryFn: ({ client: queryClient, queryKey }) =>
      updatePoolEvents(client, rewardPools, fromBlock, queryClient.getQueryData<PoolEvents>(queryKey)),
    structuralSharing: false,
    refetchInterval: 10_000,
  });
  // Only ended epochs: the current one's pool is "would earn now" above. Newest first.
  const ended =
    current === undefined || poolEvents.data === undefined
      ? []
      : epochsWithPools(poolEvents.data)
          .filter((epoch) => epoch < BigInt(current))
          .reverse();
  const states = useReadContracts({
    allowFailure: false,
    contracts: ended.map((epoch) => ({ ...pools, functionName: "settlementOf", args: [epoch] }) as const),
    query: { ...REFRESH, enabled: ended.length > 0 },
  });
  const withPool =
    states.data === undefined
      ? []
      : ended.flatMap((epoch, index) => (states.data[index].pool > 0n ? [{ epoch, state: states.data[index] }] : []));

  /** Whether `epoch`'s settlement has opened by the head the page read, and whether the page still holds its events. */
  const readiness = (epoch: bigint, state: SettlementState) => ({
    opened: snapshot !== undefined && snapshot.head.timestamp >= Number(state.settlementOpensAt),
    // By the window now: `computeSettlement` checks with the window of the epoch's boundary, and reads what is missing.
    held: snapshot !== undefined && holdsEpoch(snapshot, Number(epoch), snapshot.livenessWindow),
  });
  const settlements = useQueries({
    queries: withPool.map(({ epoch, state }) => {
      const { opened, held } = readiness(epoch, state);
      return {
        // Final once the settlement has opened: the events before it never change, so it is computed once.
        queryKey: ["network", "settlement", rewardPools, epoch.toString(), state.settlementOpensAt.toString(), state.pool.toString()],
        queryFn: () => computeSettlement(client, contracts, snapshot!, Number(epoch), state, fromBlock),
        enabled: opened && (held || readOlder.has(epoch.toString())),
        staleTime: Infinity,
      };
    }),
  });
  const pairs = withPool.flatMap(({ epoch }) => licenseIds.map((licenseId) => ({ epoch, licenseId })));
  const claimed = useReadContracts({
    allowFailure: false,
    contracts: pairs.map(({ epoch, licenseId }) => ({ ...pools, functionName: "isClaimed", args: [epoch, licenseId] }) as const),
    query: { ...REFRESH, enabled: pairs.length > 0 },
  });
  // While the nodes vote: how far the page's own root is from the quorum.
  const voting = withPool.flatMap(({ epoch, state }, index) => {
    const root = settlements[index]?.data?.tree.root;
    return !state.accepted && root !== undefined ? [{ epoch, root }] : [];
  });
  const votes = useReadContracts({
    allowFailure: false,
    contracts: voting.map(({ epoch, root }) => ({ ...pools, functionName: "rootVotesOf", args: [epoch, root] }) as const),
    query: { ...REFRESH, enabled: voting.length > 0 },
  });
  const quorum = useReadContract({
    address: config.contracts.l2.NodeRegistry,
    abi: nodeRegistryAbi,
    chainId: chains.l2.id,
    functionName: "quorum",
    query: { refetchInterval: 10_000, enabled: voting.length > 0 },
  });

  const rows: RewardRow[] = withPool.map(({ epoch, state }, index) => {
    const query = settlements[index];
    const { opened, held } = readiness(epoch, state);
    const votingIndex = voting.findIndex((entry) => entry.epoch === epoch);
    return {
      epoch,
      state,
      settlement: { data: query?.data, error: query?.error ?? null, fetching: query?.isFetching ?? false, opened, held },
      claimed: licenseIds.map((_, license) => claimed.data?.[index * licenseIds.length + license]),
      votes: votingIndex < 0 ? undefined : votes.data?.[votingIndex],
    };
  });
  const now = snapshot?.head.timestamp ?? 0;
  const failure = poolEvents.error ?? states.error ?? claimed.error ?? votes.error ?? quorum.error;

  /** The wallet's licenses' payouts of `row`'s epoch, or why they are not known yet. */
  const payouts = (row: RewardRow) => {
    const { data, error, fetching, opened, held } = row.settlement;
    if (data !== undefined)
      return (
        <ul>
          {licenseIds.map((licenseId, index) => {
            const payout = data.tree.proofOf(licenseId);
            const claimedState = row.claimed[index];
            return (
              <li key={licenseId.toString()} data-testid="reward-payout" data-license-id={licenseId.toString()}>
                #{licenseId.toString()}: {payout === undefined ? "nothing earned" : `${formatAmount(payout.amount)}`}
                {payout !== undefined && (claimedState === undefined ? "" : claimedState ? " (claimed)" : " (not claimed)")}
              </li>
            );
          })}
        </ul>
      );
    if (error !== null)
      return (
        <span className="error" role="alert">
          Could not compute the payouts: {describeError(error)}
        </span>
      );
    if (!opened) return <span className="hint">Known once the settlement opens.</span>;
    if (!held && !readOlder.has(row.epoch.toString()))
      return (
        <>
          <span className="hint">This epoch's events are older than the page keeps. </span>
          <button type="button" className="secondary" onClick={() => setReadOlder((set) => new Set([...set, row.epoch.toString()]))}>
            Read epoch {row.epoch.toString()}'s events
          </button>
        </>
      );
    return fetching ? <span role="status">Computing the payouts…</span> : "…";
  };

  return (
    <>
      {failure !== null && (
        <p className="error" role="alert">
          {describeError(failure)}
        </p>
      )}
      {rows.length === 0 ? (
        <p className="hint">
          {poolEvents.isLoading || states.isLoading || current === undefined ? "Loading…" : "No ended epoch has a reward pool."}
        </p>
      ) : (
        <DataTable
          caption="Reward pools of ended epochs"
          columns={[
            { header: "Epoch", rowHeader: true, cell: (row) => row.epoch.toString() },
            { header: "Pool (primary tokens)", cell: (row) => formatAmount(row.state.pool), cellProps: () => ({ className: "figure" }) },
            {
              header: "Settlement",
              cell: (row) =>
                settlementStatus(
                  row.state,
                  now,
                  row.votes === undefined || quorum.data === undefined ? undefined : { forRoot: row.votes, quorum: quorum.data },
                ),
              cellProps: () => ({ "data-testid": "reward-status" }),
            },
            { header: "Your licenses' payouts (staked tokens)", cell: payouts },
            {
              header: <span className="hint">Action</span>,
              cell: (row) => {
                const licenses = licenseIds.map((licenseId, index) => ({ licenseId, claimed: row.claimed[index] }));
                const step = claimStep(row.epoch, row.state, now, row.settlement.data?.tree, licenses);
                return (
                  <TxButton
                    chainId={chains.l2.id}
                    variant="secondary"
                    disabled={"reason" in step}
                    disabledReason={"reason" in step ? step.reason : undefined}
                    send={() => {
                      if ("reason" in step) throw new Error(step.reason);
                      return simulateAndWrite(wagmiConfig, { ...pools, functionName: "claimRewards", args: [step.claims] });
                    }}
                  >
                    Claim rewards
                  </TxButton>
                );
              },
            },
          ]}
          rows={rows}
          rowKey={(row) => row.epoch.toString()}
          rowProps={(row) => ({ "data-testid": "reward-row", "data-epoch": row.epoch.toString() })}
        />
      )}
      <p className="hint">
        After an epoch ends and its settlement delay passes, the nodes vote the root of its payouts, computed from the registries' events as
        this page computes them. Once a root has a quorum of votes and its dispute period is over, each license's owner claims its payout,
        paid in staked tokens. The page sends a claim only when the accepted root is the one it computed.
      </p>
    </>
  );
}
