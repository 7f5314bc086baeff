import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useParams } from "react-router";
import { getAddress, isAddress, type Abi, type Address } from "viem";

import { useAppSettings } from "../../app-context";
import { DataTable, type Column } from "../../components/DataTable";
import { HexLink } from "../../components/ExplorerLink";
import { contractAt, type ChainKey } from "../../explorer/abis";
import { historyBefore, type HistoryPage } from "../../explorer/ots";
import {
  nodeLicenseAbi,
  nodeRegistryAbi,
  primaryTokenAbi,
  protocolTimelockAbi,
  rewardPoolsAbi,
  stakedTokenAbi,
  verificationRegistryAbi,
} from "../../generated/abis";
import { formatAmount, formatTime } from "../../lib/format";
import { describeError } from "../../lib/errors";
import { useMethodName } from "./ExplorerHome";
import { Addr, Fact, Loaded } from "./parts";
import { chainParam, useExplorer, useOts } from "./useExplorer";

/** The licenses listed on an owner's page at most (the rest are counted). */
const LICENSES_LISTED = 50;

/** `/explorer/<l1|l2>/address/<address>`: name, balances, roles in the protocol, history. */
export function AddressView() {
  const params = useParams();
  const chain = chainParam(params.chain);
  const address = isAddress(params.address ?? "", { strict: false }) ? getAddress(params.address!) : undefined;
  const { known, chainName } = useExplorer();
  if (chain === undefined || address === undefined) return <h1>Not an address: {params.address}</h1>;
  const named = contractAt(known, chain, address);
  return (
    <>
      <h1>
        {named !== undefined ? named.name : "Address"} on {chainName(chain)}
      </h1>
      <p>
        <code data-testid="address">{address}</code>
      </p>
      <Balances chain={chain} address={address} />
      <Roles chain={chain} address={address} />
      <History chain={chain} address={address} />
    </>
  );
}

function Balances({ chain, address }: { chain: ChainKey; address: Address }) {
  const { config } = useAppSettings();
  const { clients } = useExplorer();
  const balances = useQuery({
    queryKey: ["explorer", "balances", chain, address],
    refetchInterval: 5_000,
    queryFn: async () => {
      const client = clients[chain];
      const token = config.contracts[chain].PrimaryToken;
      const [eth, code, primary, staked] = await Promise.all([
        client.getBalance({ address }),
        client.getCode({ address }),
        client.readContract({ address: token, abi: primaryTokenAbi, functionName: "balanceOf", args: [address] }),
        chain === "l2"
          ? client.readContract({
              address: config.contracts.l2.StakedToken,
              abi: stakedTokenAbi,
              functionName: "balanceOf",
              args: [address],
            })
          : Promise.resolve(undefined),
      ]);
      return { eth, isContract: code !== undefined && code !== "0x", primary, staked };
    },
  });
  return (
    <section aria-labelledby="balances-heading">
      <h2 id="balances-heading">Balances</h2>
      <Loaded query={balances} what="the balances">
        {(data) => (
          <dl className="facts">
            <Fact term="Kind">{data.isContract ? "Contract" : "Account (no code)"}</Fact>
            <Fact term="ETH" testId="balance-eth">
              {formatAmount(data.eth, 18, 6)}
            </Fact>
            <Fact term="Primary token" testId="balance-primary">
              {formatAmount(data.primary, 18, 6)}
            </Fact>
            {data.staked !== undefined && (
              <Fact term="Staked token" testId="balance-staked">
                {formatAmount(data.staked, 18, 6)}
              </Fact>
            )}
          </dl>
        )}
      </Loaded>
    </section>
  );
}

/** The access-control roles the protocol's contracts hand out, by contract: each read from the contract itself. */
const ROLE_CONTRACTS: Array<{ chain: ChainKey; name: string; abi: Abi; roles: string[] }> = [
  { chain: "l2", name: "NodeLicense", abi: nodeLicenseAbi, roles: ["DEFAULT_ADMIN_ROLE"] },
  { chain: "l2", name: "NodeRegistry", abi: nodeRegistryAbi, roles: ["DEFAULT_ADMIN_ROLE", "RECORDER_ROLE"] },
  { chain: "l2", name: "StakedToken", abi: stakedTokenAbi, roles: ["DEFAULT_ADMIN_ROLE", "PROTOCOL_ROLE"] },
  { chain: "l2", name: "VerificationRegistry", abi: verificationRegistryAbi, roles: ["DEFAULT_ADMIN_ROLE", "ATTESTATION_ROLE"] },
  { chain: "l2", name: "RewardPools", abi: rewardPoolsAbi, roles: ["DEFAULT_ADMIN_ROLE", "REWARDS_FUNDER_ROLE"] },
  {
    chain: "l1",
    name: "Timelock",
    abi: protocolTimelockAbi,
    roles: ["DEFAULT_ADMIN_ROLE", "PROPOSER_ROLE", "EXECUTOR_ROLE", "CANCELLER_ROLE"],
  },
];

const roleWords = (role: string, contract: string) =>
  role === "DEFAULT_ADMIN_ROLE"
    ? `admin of ${contract}`
    : `${role
        .replace(/_ROLE$/, "")
        .toLowerCase()
        .replace(/_/g, " ")} (${role}) of ${contract}`;

function Roles({ chain, address }: { chain: ChainKey; address: Address }) {
  const { config } = useAppSettings();
  const { clients } = useExplorer();
  const roles = useQuery({
    queryKey: ["explorer", "roles", chain, address],
    queryFn: async () => {
      const client = clients[chain];
      const found: string[] = [];
      const contracts = ROLE_CONTRACTS.filter(
        (entry) => entry.chain === chain && (config.contracts[chain] as Record<string, Address | undefined>)[entry.name] !== undefined,
      );
      await Promise.all(
        contracts.flatMap((entry) =>
          entry.roles.map(async (role) => {
            const at = (config.contracts[chain] as Record<string, Address>)[entry.name];
            const id = (await client.readContract({ address: at, abi: entry.abi, functionName: role })) as `0x${string}`;
            const holds = (await client.readContract({
              address: at,
              abi: entry.abi,
              functionName: "hasRole",
              args: [id, address],
            })) as boolean;
            if (holds) found.push(roleWords(role, entry.name));
          }),
        ),
      );
      let licenses: bigint[] = [];
      let licenseCount = 0n;
      let operated: bigint[] = [];
      if (chain === "l2") {
        const license = { address: config.contracts.l2.NodeLicense, abi: nodeLicenseAbi } as const;
        licenseCount = await client.readContract({ ...license, functionName: "balanceOf", args: [address] });
        licenses = await Promise.all(
          Array.from({ length: Math.min(Number(licenseCount), LICENSES_LISTED) }, (_, index) =>
            client.readContract({ ...license, functionName: "tokenOfOwnerByIndex", args: [address, BigInt(index)] }),
          ),
        );
        // Licenses ever delegated to this address, kept where it is still their operator.
        const delegated = await client.getContractEvents({
          address: config.contracts.l2.NodeRegistry,
          abi: nodeRegistryAbi,
          eventName: "Delegated",
          args: { operator: address },
          fromBlock: BigInt(config.l2.fromBlock),
        });
        const ids = [...new Set(delegated.map((log) => log.args.licenseId!))];
        const operators = await Promise.all(
          ids.map((id) =>
            client.readContract({
              address: config.contracts.l2.NodeRegistry,
              abi: nodeRegistryAbi,
              functionName: "operatorOf",
              args: [id],
            }),
          ),
        );
        operated = ids.filter((_, index) => operators[index] === address).sort((a, b) => (a < b ? -1 : 1));
      }
      return { found: found.sort(), licenses: licenses.sort((a, b) => (a < b ? -1 : 1)), licenseCount, operated };
    },
  });
  const ids = (list: bigint[]) => list.map((id) => `#${id}`).join(", ");
  return (
    <section aria-labelledby="roles-heading">
      <h2 id="roles-heading">Roles in the protocol</h2>
      <Loaded query={roles} what="the roles">
        {(data) => {
          const lines = [
            ...(data.licenseCount > 0n
              ? [
                  `license owner: ${data.licenseCount} license${data.licenseCount === 1n ? "" : "s"} (${ids(data.licenses)}${data.licenseCount > BigInt(data.licenses.length) ? ", …" : ""})`,
                ]
              : []),
            ...(data.operated.length > 0
              ? [`operator (burner) of license${data.operated.length === 1 ? "" : "s"} ${ids(data.operated)}`]
              : []),
            ...data.found,
          ];
          return lines.length === 0 ? (
            <p>None on {chain === "l2" ? "the L2 protocol contracts" : "the L1 timelock"}.</p>
          ) : (
            <ul data-testid="roles">
              {lines.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          );
        }}
      </Loaded>
    </section>
  );
}

type HistoryRow = HistoryPage["transactions"][number];

function History({ chain, address }: { chain: ChainKey; address: Address }) {
  const { clients, chainName } = useExplorer();
  const method = useMethodName(chain);
  const ots = useOts(chain);
  const pages = useInfiniteQuery({
    queryKey: ["explorer", "history", chain, address],
    enabled: ots.data != null,
    initialPageParam: 0n,
    queryFn: ({ pageParam }) => historyBefore(clients[chain], address, pageParam),
    // The next page starts before the oldest block of this one.
    getNextPageParam: (page) =>
      page.lastPage || page.transactions.length === 0 ? undefined : page.transactions.at(-1)!.receipt.blockNumber,
  });
  const columns: Array<Column<HistoryRow>> = [
    { header: "Transaction", rowHeader: true, cell: (row) => <HexLink chain={chain} kind="tx" value={row.transaction.hash} /> },
    { header: "Block", cell: (row) => row.receipt.blockNumber.toString() },
    { header: "Time", cell: (row) => (row.timestamp === undefined ? "—" : formatTime(row.timestamp)) },
    { header: "Method", cell: (row) => method(row.transaction) },
    { header: "From", cell: (row) => <Addr chain={chain} address={row.transaction.from} /> },
    { header: "To", cell: (row) => <Addr chain={chain} address={row.transaction.to ?? row.receipt.contractAddress} /> },
    { header: "Status", cell: (row) => (row.receipt.status === "success" ? "Success" : "Failed") },
  ];
  // A transaction may sit on two pages' edge block: shown once.
  const rows = [
    ...new Map((pages.data?.pages ?? []).flatMap((page) => page.transactions).map((row) => [row.transaction.hash, row])).values(),
  ];
  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">History</h2>
      {ots.data === null ? (
        <p className="notice" data-testid="ots-missing">
          The history of an address needs the node&apos;s Otterscan namespace (<code>ots_searchTransactionsBefore</code>), which{" "}
          {chainName(chain)}&apos;s RPC endpoint does not serve. Blocks, transactions and their decoding work without it.
        </p>
      ) : pages.isError ? (
        <p className="error" role="alert">
          Could not read the history: {describeError(pages.error)}
        </p>
      ) : pages.data === undefined ? (
        <p role="status">Loading the history…</p>
      ) : (
        <>
          <DataTable
            caption={`Transactions of ${address} on ${chainName(chain)}, newest first`}
            columns={columns}
            rows={rows}
            rowKey={(row) => row.transaction.hash}
            rowProps={() => ({ "data-testid": "history-row" })}
            empty="No transactions."
          />
          {pages.hasNextPage && (
            <button type="button" className="secondary" disabled={pages.isFetchingNextPage} onClick={() => void pages.fetchNextPage()}>
              Older transactions
            </button>
          )}
        </>
      )}
    </section>
  );
}
