import { readFile } from "node:fs/promises";
import path from "node:path";

import { Bridge, type BridgeNetwork, type OpL1Addresses } from "@avn/bridge";
import { JsonRpcProvider } from "ethers";
import type { Logger } from "pino";

import { rebalancePolicy, redactedSolverConfig, solverPolicy, type SolverConfig } from "./config.ts";
import { SolverJournal } from "./journal.ts";
import { Solver } from "./solver.ts";

export interface RunningSolver {
  address: string;
  solver: Solver;
  journal: SolverJournal;
  stop(): Promise<void>;
}

/** Opens the journals (one per direction) and starts the solver. */
export async function startSolver(config: SolverConfig, logger: Logger): Promise<RunningSolver> {
  // No cache of repeated reads (ethers keeps an equal request's answer 250 ms): a pass that a new head starts must
  // read that head, not the block number a pass of the other chain's head read just before it, which would leave
  // an order of the new block to the next head.
  const options = { staticNetwork: true, pollingInterval: 250, cacheTimeout: -1 };
  const l1 = new JsonRpcProvider(config.L1_RPC_URL, undefined, options);
  const l2 = new JsonRpcProvider(config.L2_RPC_URL, undefined, options);
  const journal = new SolverJournal(path.join(config.SOLVER_STATE_DIR, "journal.sqlite"));
  const depositJournal =
    config.L1_ORIGIN_SETTLER === undefined ? undefined : new SolverJournal(path.join(config.SOLVER_STATE_DIR, "deposits.sqlite"));
  const closeJournals = () => {
    journal.close();
    depositJournal?.close();
  };
  try {
    logger.info({ config: redactedSolverConfig(config) }, "solver configuration");
    const solver = await Solver.start({
      l1,
      l2,
      l2WsUrl: config.L2_WS_URL,
      l1WsUrl: config.L1_WS_URL,
      key: config.SOLVER_KEY,
      originSettler: config.ORIGIN_SETTLER,
      journal,
      policy: solverPolicy(config),
      connectBridge:
        config.SOLVER_OP_CHAIN_CONFIG === undefined
          ? undefined
          : async (tokens) => Bridge.connect(await bridgeNetwork(config, l1, l2, tokens), config.SOLVER_KEY),
      rebalance: config.SOLVER_REBALANCE ? rebalancePolicy(config) : undefined,
      deposits:
        depositJournal === undefined
          ? undefined
          : { originSettler: config.L1_ORIGIN_SETTLER!, journal: depositJournal, reportDelaySeconds: config.SOLVER_REPORT_DELAY_SECONDS },
      firstLookback: config.SOLVER_FIRST_LOOKBACK_BLOCKS,
      logger,
    });
    return {
      address: solver.address,
      solver,
      journal,
      async stop() {
        await solver.stop();
        closeJournals();
        l1.destroy();
        l2.destroy();
      },
    };
  } catch (error) {
    closeJournals();
    l1.destroy();
    l2.destroy();
    throw error;
  }
}

/** The bridge's view of the solver's chains: their RPCs, the OP contracts of SOLVER_OP_CHAIN_CONFIG, the settlers' tokens. */
async function bridgeNetwork(
  config: SolverConfig,
  l1: JsonRpcProvider,
  l2: JsonRpcProvider,
  tokens: { l1: string; l2: string },
): Promise<BridgeNetwork> {
  const file = config.SOLVER_OP_CHAIN_CONFIG!;
  const { contracts } = JSON.parse(await readFile(file, "utf8")) as { contracts?: OpL1Addresses };
  if (contracts === undefined) throw new Error(`${file} names no OP contracts (format: deploy/op-chains/example.json)`);
  const [l1Network, l2Network] = await Promise.all([l1.getNetwork(), l2.getNetwork()]);
  return {
    name: "solver",
    l1: { chainId: Number(l1Network.chainId), rpcUrl: config.L1_RPC_URL },
    l2: { chainId: Number(l2Network.chainId), rpcUrl: config.L2_RPC_URL },
    opContracts: contracts,
    primaryToken: tokens,
    pollIntervalMs: 1_000,
  };
}
