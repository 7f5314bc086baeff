import path from "node:path";

import { JsonRpcProvider, toQuantity, Wallet, ZeroAddress } from "ethers";

import { devAccount } from "./accounts.ts";
import { type DevAccount } from "../common/stack-file.ts";
import { startAnvil, type AnvilInstance } from "./anvil.ts";
import { DepositRelay } from "./op/deposit-relay.ts";
import { deployOpL1, initializeOutputOracle, type OpL1Contracts } from "./op/l1.ts";
import { L1AttributesUpdater } from "./op/l1-attributes.ts";
import { EAS_PREDEPLOYS, L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { MULTICALL3_ADDRESS } from "@avn/protocol/constants";
import { DELEGATE_REGISTRY_ADDRESS } from "@avn/protocol/delegations";
import { installL2Predeploys, installMulticall3, installPermit2 } from "./op/l2.ts";
import { installDelegateRegistry } from "./delegate-registry.ts";
import { OutputProposer } from "./op/output-proposer.ts";
import { startRpcFront, type RpcFront, type SubmissionRecord } from "./rpc-front.ts";

export const DEVNET_L1_CHAIN_ID = 900;
export const DEVNET_L2_CHAIN_ID = 901;

/**
 * The zero address's ETH on both devnet chains at start: 10,000 ETH, the order of what it holds on
 * Ethereum mainnet and Sepolia (ETH sent there by mistake, never spendable). A node estimates gas and runs
 * `eth_call` for a request that names no sender as the zero address; the OP SDK's `depositETH` estimates
 * its deposit so (SDK 3.3.3), and a public network's zero address covers the value. Left at anvil's
 * default (it only collects the devnet's priority fees, a few hundredths of an ETH), every such estimate
 * of a transfer larger than that failed with "insufficient funds for gas * price + value".
 */
export const ZERO_ADDRESS_BALANCE = 10_000n * 10n ** 18n;

/** Which anvil development account does what on the devnet. */
export const DEVNET_ACCOUNTS = {
  /** Deploys everything and holds every admin role. */
  deployer: 0,
  /** Posts L2 outputs; its own account, so that its transactions never race the deployer's nonces. */
  opProposer: 9,
} as const;

export interface OpDevnetOptions {
  /** Where the devnet keeps its state between restarts of its services (the relay's cursor). */
  stateDir: string;
  /** The L1's chain id (default 900, `DEVNET_L1_CHAIN_ID`; the rehearsal of the live deployment uses 11155111). */
  l1ChainId?: number;
  /** The L2's chain id (default 901, `DEVNET_L2_CHAIN_ID`; the rehearsal uses 123420000418). */
  l2ChainId?: number;
  /**
   * The L1 keeps only this many past states (`AnvilOptions.pruneHistory`), so that it mines many blocks at
   * once quickly (the rehearsal's vote). Reads at older blocks fail. Default: all kept.
   */
  l1RecentStates?: number;
  /** The L1's hardfork rules (`AnvilOptions.hardfork`); default: anvil's latest. */
  l1Hardfork?: string;
  /** Seconds between a withdrawal's proof and its finalization (the live chain: 7 days). */
  finalizationPeriodSeconds?: bigint;
  /** Seconds per L2 block (the live L2: 2). */
  l2BlockTime?: number;
  /** Seconds between L1 blocks when no transaction arrives (transactions are mined at once). */
  l1BlockTime?: number;
  /**
   * How often the relay and the proposer look for work, in milliseconds; the L1 attributes updater is
   * woken by each L1 block instead and retries a failed pass this often.
   */
  pollIntervalMs?: number;
  /**
   * The least time between a transaction submission's arrival at a chain's URL and its answer
   * (`src/devnet/rpc-front.ts`): longer than any wallet library's cache of nonce reads. Default 300 ms.
   */
  minSubmissionMs?: number;
  /** Lift the contract size limit on both chains (code coverage runs deploy instrumented, larger contracts). */
  disableCodeSizeLimit?: boolean;
  /** Progress lines, for a CLI to show. */
  onProgress?: (line: string) => void;
  /**
   * For diagnosis (`npm run trace:devnet-deploy`): each chain's anvil log lines at this filter (its
   * `RUST_LOG`) and what its front took in and answered for each submission.
   */
  trace?: {
    anvilLogFilter: string;
    onAnvilLine: (chain: "l1" | "l2", line: string) => void;
    onSubmission: (chain: "l1" | "l2", record: SubmissionRecord) => void;
  };
  /** Failures of the background services (each is retried). */
  onServiceError?: (service: "deposit relay" | "output proposer" | "L1 attributes", error: unknown) => void;
}

/** One devnet chain as its clients see it. */
export interface DevnetChain {
  chainId: number;
  /** The chain's JSON-RPC URL for every client: the front of `rpc-front.ts` before anvil. */
  rpcUrl: string;
  /** The chain's WebSocket URL (through the front, unchanged). */
  wsUrl: string;
  /** anvil itself, which only the devnet's own services (deployment, relay, proposer) talk to directly. */
  node: AnvilInstance;
  /** The front every client goes through (`interrupt()` cuts them off, `npm run chaos`). */
  front: RpcFront;
}

export interface OpDevnet {
  l1: DevnetChain;
  l2: DevnetChain;
  /** Providers on anvil directly, for the devnet's own services and for tests that move time. */
  l1Provider: JsonRpcProvider;
  l2Provider: JsonRpcProvider;
  /** The OP contracts on L1 (proxies), with Multicall3 and delegate.xyz's DelegateRegistry. */
  l1Contracts: OpL1Contracts & { Multicall3: string; DelegateRegistry: string };
  /** The OP predeploys on L2 (EAS and SchemaRegistry among them), with Multicall3 and DelegateRegistry. */
  l2Contracts: typeof L2_PREDEPLOYS & typeof EAS_PREDEPLOYS & { Multicall3: string; DelegateRegistry: string };
  accounts: Record<keyof typeof DEVNET_ACCOUNTS, DevAccount>;
  finalizationPeriodSeconds: bigint;
  /** Seconds between L1 blocks when no transaction arrives (`l1BlockTime`). */
  l1BlockTime: number;
  relay: DepositRelay;
  proposer: OutputProposer;
  /**
   * Keeps the L2's `L1Block` predeploy at the L1 head, as op-node's L1 attributes deposit does;
   * `await l1Attributes.caughtUp(n)` waits until L1Block knows L1 block `n`.
   */
  l1Attributes: L1AttributesUpdater;
  /** Stops the relay, the proposer, the L1 attributes updater and both chains. */
  stop(): Promise<void>;
}

/**
 * A provider for a devnet chain: it never re-detects the chain (the ids are known) and caches nothing
 * (ethers would otherwise answer a second nonce query within 250 ms from its cache, and a fast local
 * chain has moved on by then).
 */
export function devnetProvider(rpcUrl: string, chainId: number): JsonRpcProvider {
  return new JsonRpcProvider(rpcUrl, chainId, { staticNetwork: true, pollingInterval: 250, cacheTimeout: -1 });
}

/**
 * Starts a local two-chain OP Bedrock devnet: anvil L1 (chain 900 unless `l1ChainId`) with the OP L1 contracts, anvil L2
 * (chain 901 unless `l2ChainId`, `--optimism`, 30M gas) with the bridge predeploys, Multicall3 on both, and the services
 * a sequencer and a proposer would run: the L1 attributes updater (each L1 block's number, time, base
 * fee and hash → L2's `L1Block`), the deposit relay (L1 deposits → L2 deposit transactions, each after
 * its L1 block's attributes) and the output proposer (L2 output roots → L1, so withdrawals can be
 * proven). Clients reach each chain through a front that answers a submission no sooner than
 * `minSubmissionMs`, as a remote node would (`rpc-front.ts`: without it, ethers v6's 250 ms cache of
 * nonce reads makes a send-wait-send loop reuse spent nonces on a chain that mines at once).
 */
export async function startOpDevnet(options: OpDevnetOptions): Promise<OpDevnet> {
  const progress = options.onProgress ?? (() => undefined);
  const finalizationPeriodSeconds = options.finalizationPeriodSeconds ?? 12n;
  const l2BlockTime = options.l2BlockTime ?? 2;
  const l1BlockTime = options.l1BlockTime ?? 2;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const l1ChainId = options.l1ChainId ?? DEVNET_L1_CHAIN_ID;
  const l2ChainId = options.l2ChainId ?? DEVNET_L2_CHAIN_ID;
  const started: AnvilInstance[] = [];
  const anvilLog = (chain: "l1" | "l2") => {
    const trace = options.trace;
    return trace === undefined ? undefined : { filter: trace.anvilLogFilter, onLine: (line: string) => trace.onAnvilLine(chain, line) };
  };
  const fronts: RpcFront[] = [];
  const providers: JsonRpcProvider[] = [];
  const stopChains = async () => {
    for (const provider of providers) provider.destroy();
    await Promise.all(fronts.map((front) => front.stop()));
    await Promise.all(started.map((chain) => chain.stop()));
  };

  try {
    progress(`Starting L1 (anvil, chain ${l1ChainId}) and L2 (anvil --optimism, chain ${l2ChainId})…`);
    const launches = await Promise.allSettled([
      startAnvil({
        chainId: l1ChainId,
        blockTime: l1BlockTime,
        mixedMining: true,
        disableCodeSizeLimit: options.disableCodeSizeLimit,
        pruneHistory: options.l1RecentStates,
        hardfork: options.l1Hardfork,
        log: anvilLog("l1"),
      }),
      // Mined per transaction while the predeploys are installed, then every l2BlockTime seconds.
      startAnvil({
        chainId: l2ChainId,
        optimism: true,
        gasLimit: 30_000_000n,
        disableCodeSizeLimit: options.disableCodeSizeLimit,
        log: anvilLog("l2"),
      }),
    ]);
    // Keep every chain that did start, so that a failure of the other one stops it too.
    for (const launch of launches) if (launch.status === "fulfilled") started.push(launch.value);
    const failedLaunch = launches.find((launch) => launch.status === "rejected");
    if (failedLaunch !== undefined) throw failedLaunch.reason;
    const [l1Node, l2Node] = started;
    const minSubmissionMs = options.minSubmissionMs ?? 300;
    for (const [index, node] of started.entries()) {
      const chain = index === 0 ? "l1" : "l2";
      const trace = options.trace;
      const onSubmission = trace === undefined ? undefined : (record: SubmissionRecord) => trace.onSubmission(chain, record);
      fronts.push(await startRpcFront({ upstreamPort: node.port, minSubmissionMs, onSubmission }));
    }
    const l1: DevnetChain = { chainId: l1ChainId, rpcUrl: fronts[0].rpcUrl, wsUrl: fronts[0].wsUrl, node: l1Node, front: fronts[0] };
    const l2: DevnetChain = { chainId: l2ChainId, rpcUrl: fronts[1].rpcUrl, wsUrl: fronts[1].wsUrl, node: l2Node, front: fronts[1] };
    const l1Provider = devnetProvider(l1Node.rpcUrl, l1ChainId);
    const l2Provider = devnetProvider(l2Node.rpcUrl, l2ChainId);
    providers.push(l1Provider, l2Provider);
    const accounts = {
      deployer: devAccount(DEVNET_ACCOUNTS.deployer),
      opProposer: devAccount(DEVNET_ACCOUNTS.opProposer),
    };
    const l1Deployer = new Wallet(accounts.deployer.privateKey, l1Provider);
    const l2Deployer = new Wallet(accounts.deployer.privateKey, l2Provider);
    // Like a public network's: estimates and calls that name no sender can carry ETH (see the constant).
    await Promise.all(
      [l1Provider, l2Provider].map((provider) => provider.send("anvil_setBalance", [ZeroAddress, toQuantity(ZERO_ADDRESS_BALANCE)])),
    );

    progress("Deploying the OP Bedrock L1 contracts and installing the L2 predeploys…");
    await Promise.all([
      installMulticall3(l1Provider),
      installMulticall3(l2Provider),
      installPermit2(l1Provider, BigInt(l1ChainId)),
      installPermit2(l2Provider, BigInt(l2ChainId)),
      // delegate.xyz v2 on both, as on every public chain: the L1 is the EVM source delegations are read on.
      installDelegateRegistry(l1Provider),
      installDelegateRegistry(l2Provider),
    ]);
    const opL1 = await deployOpL1(l1Deployer, { admin: accounts.deployer.address, l2GasLimit: 30_000_000n });
    await installL2Predeploys(l2Provider, l2Deployer, opL1);

    // From here on the L2 makes a block every l2BlockTime seconds, like the live rollup; the output
    // oracle counts L2 time from this block.
    await l2Provider.send("evm_setIntervalMining", [l2BlockTime]);
    const l2Start = await l2Provider.getBlock("latest");
    if (l2Start === null) throw new Error("the L2 has no latest block");
    // The oracle refuses a starting timestamp later than the L1 block that initializes it. The L1's
    // latest block (mined every 2 s) can be older than the L2 block just made, and the L2's clock can
    // even run seconds ahead of the wall clock (anvil gives each of the many blocks the predeploys made
    // within one second a later second): mine an L1 block now, no earlier than the L2's start.
    const l1Latest = await l1Provider.getBlock("latest");
    const initializedAt = Math.max(l2Start.timestamp, Math.floor(Date.now() / 1000));
    if (l1Latest !== null && l1Latest.timestamp < initializedAt) await l1Provider.send("evm_setNextBlockTimestamp", [initializedAt]);
    await l1Provider.send("evm_mine", []);
    await initializeOutputOracle(l1Deployer, opL1, {
      proposer: accounts.opProposer.address,
      challenger: accounts.deployer.address,
      submissionInterval: 1n,
      l2BlockTime: BigInt(l2BlockTime),
      startingBlockNumber: BigInt(l2Start.number),
      startingTimestamp: BigInt(l2Start.timestamp),
      finalizationPeriodSeconds,
    });

    const onServiceError = options.onServiceError ?? (() => undefined);
    // Starts at the L1 head: L1Block, installed with empty storage, knows no block yet.
    const l1Attributes = new L1AttributesUpdater({
      l1: l1Provider,
      l2: l2Provider,
      l1WsUrl: l1Node.wsUrl,
      l2WsUrl: l2Node.wsUrl,
      systemConfig: opL1.SystemConfig,
      pollIntervalMs,
      onError: (error) => onServiceError("L1 attributes", error),
    });
    const relay = new DepositRelay({
      l1: l1Provider,
      l2: l2Provider,
      portal: opL1.OptimismPortal,
      fromBlock: 0,
      cursorFile: path.join(options.stateDir, "deposit-relay.json"),
      pollIntervalMs,
      onError: (error) => onServiceError("deposit relay", error),
      l1Attributes,
    });
    const proposer = new OutputProposer({
      l1Signer: new Wallet(accounts.opProposer.privateKey, l1Provider),
      l2: l2Provider,
      oracle: opL1.L2OutputOracle,
      pollIntervalMs,
      onError: (error) => onServiceError("output proposer", error),
    });
    l1Attributes.start();
    relay.start();
    proposer.start();

    return {
      l1,
      l2,
      l1Provider,
      l2Provider,
      l1Contracts: { ...opL1, Multicall3: MULTICALL3_ADDRESS, DelegateRegistry: DELEGATE_REGISTRY_ADDRESS },
      l2Contracts: { ...L2_PREDEPLOYS, ...EAS_PREDEPLOYS, Multicall3: MULTICALL3_ADDRESS, DelegateRegistry: DELEGATE_REGISTRY_ADDRESS },
      accounts,
      finalizationPeriodSeconds,
      l1BlockTime,
      relay,
      proposer,
      l1Attributes,
      async stop() {
        await Promise.all([relay.stop(), proposer.stop(), l1Attributes.stop()]);
        await stopChains();
      },
    };
  } catch (error) {
    await stopChains();
    throw error;
  }
}
