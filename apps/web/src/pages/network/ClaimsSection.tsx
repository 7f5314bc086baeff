import { useQuery } from "@tanstack/react-query";
import type { PublicClient } from "viem";
import { useConfig, useConnection, useReadContract, useReadContracts } from "wagmi";

import { useAppSettings } from "../../app-context";
import { DataTable } from "../../components/DataTable";
import { TxButton } from "../../components/TxButton";
import { verificationRegistryAbi } from "../../generated/abis";
import { useOwnedLicenses } from "../../hooks/useOwnedLicenses";
import { describeError } from "../../lib/errors";
import { formatAmount, formatBps } from "../../lib/format";
import { simulateAndWrite } from "../../lib/transactions";
import { useEpochQos } from "./useEpochQos";

/** Fees accrue as jobs finalize, so the figures re-read every few seconds. */
const REFRESH = { refetchInterval: 5_000 } as const;

/** The connected wallet's licenses' scores, job fees and epoch rewards, with the transactions that claim them. */
export function ClaimsSection({ client }: { client: PublicClient }) {
  const { address } = useConnection();
  const { licenseIds, error } = useOwnedLicenses(address);

  return (
    <section aria-labelledby="claims-heading" className="panel">
      <h2 id="claims-heading">Your scores, fees and rewards</h2>
      {address === undefined ? (
        <p className="hint">Connect a wallet to see what its licenses have earned.</p>
      ) : error !== null ? (
        <p className="error" role="alert">
          Could not read your licenses: {describeError(error)}
        </p>
      ) : licenseIds === undefined ? (
        <p role="status">Loading your licenses…</p>
      ) : licenseIds.length === 0 ? (
        <p className="hint">This wallet holds no license.</p>
      ) : (
        <>
          <Scores licenseIds={licenseIds} client={client} />
          <Fees licenseIds={licenseIds} />
          <Rewards licenseIds={licenseIds} client={client} />
        </>
      )}
    </section>
  );
}

/**
 * The wallet's licenses' score in the current epoch and the three before, from the same figures as the
 * Nodes section's table (one read shared by both).
 */
function Scores({ licenseIds, client }: { licenseIds: bigint[]; client: PublicClient }) {
  const { config, chains } = useAppSettings();
  const qos = useEpochQos(client);
  const epochs = qos.data?.epochs ?? [];
  // What each license would be paid were the current epoch to end now, by the rule rewards follow today.
  const current = epochs.find((epoch) => epoch.current)?.frame.epoch;
  const verification = { address: config.contracts.l2.VerificationRegistry, abi: verificationRegistryAbi, chainId: chains.l2.id } as const;
  const rewards = useReadContracts({
    allowFailure: false,
    contracts: licenseIds.map((id) => ({ ...verification, functionName: "epochRewardInfo", args: [BigInt(current ?? 0), id] }) as const),
    query: { ...REFRESH, enabled: current !== undefined },
  });
  const wouldEarn = (index: number) => {
    const info = rewards.data?.[index];
    if (info === undefined) return "…";
    const [pool, totalVotes, licenseVotes] = info;
    return formatAmount(totalVotes === 0n ? 0n : (pool * licenseVotes) / totalVotes);
  };

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
            {
              header: "Would earn now (staked tokens)",
              cell: (id: bigint) => wouldEarn(licenseIds.indexOf(id)),
              cellProps: () => ({ "data-testid": "would-earn", className: "figure" }),
            },
          ]}
          rows={licenseIds}
          rowKey={(id) => id.toString()}
          rowProps={(id) => ({ "data-testid": "your-score-row", "data-license-id": id.toString() })}
        />
      )}
      {rewards.error !== null && (
        <p className="error" role="alert">
          Could not read this epoch's rewards: {describeError(rewards.error)}
        </p>
      )}
      <p className="hint">
        The score is not yet what rewards are split by: each agreeing vote earns one point (below). "Would earn now" is the current epoch's
        pool times the license's share of its agreeing votes, were the epoch to end now.
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

/**
 * Rewards of ended epochs. The views give, per epoch and license, the pool, the epoch's agreeing votes
 * and the license's unclaimed ones (zeroed by a claim); the contract pays pool × votes / total, rounded
 * down, per license. Which epochs have a pool is read from the funding and roll-over events, so the page
 * does not have to ask every epoch since deployment.
 */
function Rewards({ licenseIds, client }: { licenseIds: bigint[]; client: PublicClient }) {
  const { config, chains } = useAppSettings();
  const wagmiConfig = useConfig();
  const verification = { address: config.contracts.l2.VerificationRegistry, abi: verificationRegistryAbi, chainId: chains.l2.id } as const;
  const current = useReadContract({ ...verification, functionName: "currentEpoch", query: { refetchInterval: 10_000 } });
  const funded = useQuery({
    queryKey: ["network", "funded-epochs", verification.address, config.l2.fromBlock],
    queryFn: async () => {
      const filter = {
        address: verification.address,
        abi: verificationRegistryAbi,
        fromBlock: BigInt(config.l2.fromBlock),
        strict: true,
      } as const;
      const [fundings, rollOvers] = await Promise.all([
        client.getContractEvents({ ...filter, eventName: "EpochRewardsFunded" }),
        client.getContractEvents({ ...filter, eventName: "EpochRewardsRolledOver" }),
      ]);
      const epochs = new Set([...fundings.map((log) => log.args.epoch), ...rollOvers.map((log) => log.args.toEpoch)]);
      return [...epochs].sort((a, b) => (a < b ? -1 : 1));
    },
    refetchInterval: 30_000,
  });
  // Only ended epochs can be claimed (claimRewards reverts EpochNotEnded otherwise).
  const epochs = current.data === undefined ? [] : (funded.data ?? []).filter((epoch) => epoch < current.data);
  const pairs = epochs.flatMap((epoch) => licenseIds.map((licenseId) => ({ epoch, licenseId })));
  const info = useReadContracts({
    allowFailure: false,
    contracts: pairs.map(
      ({ epoch, licenseId }) => ({ ...verification, functionName: "epochRewardInfo", args: [epoch, licenseId] }) as const,
    ),
    query: { ...REFRESH, enabled: pairs.length > 0 },
  });

  const rows = epochs
    .map((epoch) => {
      let pool = 0n;
      let totalVotes = 0n;
      let votes = 0n;
      let amount = 0n;
      const claimable: bigint[] = [];
      pairs.forEach((pair, index) => {
        const entry = info.data?.[index];
        if (pair.epoch !== epoch || entry === undefined) return;
        const [epochPool, epochVotes, licenseVotes] = entry;
        pool = epochPool;
        totalVotes = epochVotes;
        // A license's votes are part of the epoch's total, so the total is positive whenever they are.
        if (licenseVotes === 0n || epochVotes === 0n) return;
        votes += licenseVotes;
        amount += (epochPool * licenseVotes) / epochVotes; // per license, as the contract rounds
        claimable.push(pair.licenseId);
      });
      return { epoch, pool, totalVotes, votes, amount, claimable };
    })
    .filter((row) => row.votes > 0n);
  const failure = current.error ?? funded.error ?? info.error;

  return (
    <>
      <h3>Epoch rewards</h3>
      {failure !== null && (
        <p className="error" role="alert">
          {describeError(failure)}
        </p>
      )}
      {rows.length === 0 ? (
        <p className="hint">{info.isLoading || funded.isLoading ? "Loading…" : "No unclaimed rewards in ended epochs."}</p>
      ) : (
        <DataTable
          caption="Unclaimed epoch rewards"
          columns={[
            { header: "Epoch", cell: (row) => row.epoch.toString() },
            { header: "Pool (primary tokens)", cell: (row) => formatAmount(row.pool) },
            { header: "Your agreeing votes / all", cell: (row) => `${row.votes.toString()} / ${row.totalVotes.toString()}` },
            { header: "Claimable (paid staked)", cell: (row) => formatAmount(row.amount) },
            {
              header: <span className="hint">Action</span>,
              cell: (row) => (
                <TxButton
                  chainId={chains.l2.id}
                  variant="secondary"
                  disabled={row.amount === 0n}
                  disabledReason="The pool is too small for a share of your votes."
                  send={() =>
                    simulateAndWrite(wagmiConfig, { ...verification, functionName: "claimRewards", args: [row.epoch, row.claimable] })
                  }
                >
                  Claim rewards
                </TxButton>
              ),
            },
          ]}
          rows={rows}
          rowKey={(row) => row.epoch.toString()}
          rowProps={(row) => ({ "data-testid": "reward-row", "data-epoch": row.epoch.toString() })}
        />
      )}
    </>
  );
}
