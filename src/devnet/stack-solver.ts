import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

import { Bridge, type BridgeNetwork, type OpL1Addresses } from "@avn/bridge";
import { Contract, type ContractTransactionResponse, type JsonRpcProvider, NonceManager, parseEther, Wallet } from "ethers";

import type { DevAccount } from "../common/stack-file.ts";
import { waitFor } from "../common/wait-for.ts";
import { loadSolverConfig } from "../solver/config.ts";
import { devAccount } from "./accounts.ts";
import { spawnScript, type ScriptProcess } from "./script-process.ts";
import { describeExit, formatSeconds, Supervisor, type RestartBackoff } from "./supervisor.ts";

/** The development account of the local stack's solver (past anvil's ten funded ones, like the stack's others). */
export const SOLVER_ACCOUNT = 13;
/** The stack's solver fills orders that pay out at most 99% of their input (docs/intents.md). */
export const STACK_SOLVER_MIN_FEE_BPS = 100;
/**
 * Its inventory: ETH and primary tokens on L1 to pay fast withdrawals out of, and on the L2 ether (the settlements'
 * gas, and fast deposits' ETH) and primary tokens for fast deposits.
 */
export const STACK_SOLVER_INVENTORY = {
  l1Eth: parseEther("1000"),
  l1Tokens: parseEther("1000000"),
  l2Eth: parseEther("10"),
  l2Tokens: parseEther("100000"),
};

export interface StackSolver {
  account: DevAccount;
  process: ScriptProcess;
  logFile: string;
  stateDir: string;
  /** The environment it runs with (a restart runs the same). */
  env: Record<string, string>;
}

/**
 * Gives the solver account its inventory from the deployer: ETH and primary tokens on L1, and its L2 ether and
 * tokens through the standard bridge, so that what it later withdraws to L1 is backed by the portal's and the L1
 * bridge's (the devnet's L2 accounts start with ether no deposit locked on L1).
 */
export async function fundSolver(input: {
  l1: JsonRpcProvider;
  bridgeNetwork: BridgeNetwork;
  deployer: DevAccount;
  solver: string;
  l1PrimaryToken: string;
  inventory?: typeof STACK_SOLVER_INVENTORY;
}): Promise<void> {
  const inventory = input.inventory ?? STACK_SOLVER_INVENTORY;
  const l1Deployer = new NonceManager(new Wallet(input.deployer.privateKey, input.l1));
  const token = new Contract(input.l1PrimaryToken, ["function transfer(address,uint256) returns (bool)"], l1Deployer);
  await (await l1Deployer.sendTransaction({ to: input.solver, value: inventory.l1Eth })).wait();
  await ((await token.getFunction("transfer")(input.solver, inventory.l1Tokens)) as ContractTransactionResponse).wait();
  const bridge = await Bridge.connect(input.bridgeNetwork, input.deployer.privateKey);
  const deposits = [
    await bridge.depositEth(inventory.l2Eth, input.solver),
    await bridge.depositPrimaryToken(inventory.l2Tokens, { approve: true, recipient: input.solver }),
  ];
  for (const deposit of deposits) await bridge.waitFor(deposit, "RELAYED", { timeoutMs: 120_000 });
}

/**
 * Starts `npm run solver` as its own process on the stack's chains, with a fresh journal in `stateDir` (each start is
 * a new network) and its log in `logFile`, and waits for its start line. It rebalances through the devnet's standard bridge (the OP contracts are
 * written to `stateDir/op-chain.json` in the format of deploy/op-chains/example.json). `env` is set over the stack's.
 */
export async function startStackSolver(input: {
  projectRoot: string;
  stateDir: string;
  logFile: string;
  l1: { rpcUrl: string; wsUrl: string };
  l2: { rpcUrl: string; wsUrl: string };
  originSettler: string;
  /** The L1's origin settler: given, the solver fills fast deposits too. */
  l1OriginSettler?: string;
  opContracts: OpL1Addresses;
  account?: DevAccount;
  env?: Record<string, string>;
}): Promise<StackSolver> {
  const account = input.account ?? devAccount(SOLVER_ACCOUNT);
  await rm(input.stateDir, { recursive: true, force: true });
  await mkdir(input.stateDir, { recursive: true });
  const opChainConfig = path.join(input.stateDir, "op-chain.json");
  await writeFile(opChainConfig, `${JSON.stringify({ contracts: input.opContracts }, null, 2)}\n`);
  const env: Record<string, string> = {
    SOLVER_KEY: account.privateKey,
    L1_RPC_URL: input.l1.rpcUrl,
    L1_WS_URL: input.l1.wsUrl,
    L2_RPC_URL: input.l2.rpcUrl,
    L2_WS_URL: input.l2.wsUrl,
    ORIGIN_SETTLER: input.originSettler,
    ...(input.l1OriginSettler === undefined ? {} : { L1_ORIGIN_SETTLER: input.l1OriginSettler }),
    SOLVER_STATE_DIR: input.stateDir,
    SOLVER_MIN_FEE_BPS: String(STACK_SOLVER_MIN_FEE_BPS),
    // The devnet's L1 mines a block every 2 s and each transaction at once: a fill lands within seconds.
    SOLVER_MIN_SECONDS_LEFT: "10",
    SOLVER_REBALANCE: "true",
    // The devnet's finalization period is seconds: each fast deposit's fill is reported at once.
    SOLVER_REPORT_DELAY_SECONDS: "0",
    SOLVER_OP_CHAIN_CONFIG: opChainConfig,
    LOG_LEVEL: "info",
    ...input.env,
  };
  loadSolverConfig(env); // a wrong setting fails here, with every problem listed, not in the child's log
  const process = await spawnScript({ projectRoot: input.projectRoot, script: "solver.ts", env, logFile: input.logFile });
  await waitFor("the solver's start", async () => {
    if (process.child.exitCode !== null) throw new Error(`the solver exited; see ${input.logFile}`);
    return (await readFile(input.logFile, "utf8").catch(() => "")).includes('"msg":"solver starting"');
  });
  return { account, process, logFile: input.logFile, stateDir: input.stateDir, env };
}

/** A stack solver under a supervisor, which restarts it on its journal after a crash. */
export interface SupervisedStackSolver extends StackSolver {
  /** Its current process (a restart replaces it); its `stop` stops the supervision too. */
  readonly process: ScriptProcess;
  /** How many times it was restarted after a crash. */
  readonly restarts: number;
  /** Resolves with its next process once it has been restarted after a crash (and `onRestarted` has run). */
  restarted(): Promise<ScriptProcess>;
  /** Stops it (SIGTERM by default); no restart follows. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Supervises a solver `startStackSolver` started: after a crash (an exit it was not asked for, other than a clean one)
 * it runs `npm run solver` again with the same environment, journal and log, after the backoff, and says so through
 * `onProgress`. A restart keeps the state directory: the journal is how it resumes what the crash cut short.
 */
export async function superviseStackSolver(
  solver: StackSolver,
  options: {
    projectRoot: string;
    backoff?: Partial<RestartBackoff>;
    onProgress: (line: string) => void;
    /** Called with each restarted process, before `restarted()` resolves (the local stack rewrites its file). */
    onRestarted?: (process: ScriptProcess) => Promise<void>;
  },
): Promise<SupervisedStackSolver> {
  const { onProgress } = options;
  const supervisor: Supervisor<ScriptProcess> = await Supervisor.start<ScriptProcess>({
    initial: solver.process,
    start: () => spawnScript({ projectRoot: options.projectRoot, script: "solver.ts", env: solver.env, logFile: solver.logFile }),
    backoff: options.backoff,
    onExit: (exit) => onProgress(describeExit("The solver", exit, solver.logFile)),
    onRestart: async (process) => {
      await options.onRestarted?.(process);
      onProgress(`The solver restarted (pid ${process.child.pid}).`);
    },
    onError: (error, retryInMs) =>
      onProgress(
        retryInMs === undefined
          ? `The solver: ${(error as Error)?.message ?? String(error)} (after its restart)`
          : `The solver could not be restarted: ${(error as Error)?.message ?? String(error)} (trying again in ${formatSeconds(retryInMs)})`,
      ),
  });
  const stop = (signal?: NodeJS.Signals) => supervisor.stop(signal);
  return {
    account: solver.account,
    logFile: solver.logFile,
    stateDir: solver.stateDir,
    env: solver.env,
    get process(): ScriptProcess {
      const current = supervisor.current;
      return {
        child: current.child,
        exited: current.exited,
        async stop(signal) {
          await stop(signal);
          return await current.exited;
        },
      };
    },
    get restarts() {
      return supervisor.restarts;
    },
    restarted: () => supervisor.restarted(),
    stop,
  };
}
