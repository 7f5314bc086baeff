import type { Provider } from "ethers";

import { devnetProvider, type OpDevnet } from "../devnet/op-devnet.ts";
import { startSolanaRpcServer, type SolanaRpcServer } from "../devnet/solana/litesvm-rpc-server.ts";
import type { SupervisedStackSolver } from "../devnet/stack-solver.ts";
import type { VerificationNetwork } from "../devnet/verification-network.ts";
import type { StackFile } from "../common/stack-file.ts";
import { JobTracker } from "./jobs.ts";
import { demoStreams, SteadyLoad, type LoadStream, type LoadWindow } from "./load.ts";
import { FastWithdrawals } from "./orders.ts";
import { SCENARIOS, type ChaosContext, type ScenarioReport } from "./scenarios.ts";

/** A running network to break: the local stack's (`npm run chaos`) or a test's. */
export interface ChaosTarget {
  devnet: OpDevnet;
  network: VerificationNetwork;
  /** The stack file's view of it: the API and its key, the demo holdings, the consumer, the registry. */
  stack: StackFile;
  /** The API's key database, when it is a PostgreSQL server of the run's own (scenario 7). */
  postgres?: ChaosContext["postgres"];
  /** The intent layer's solver under the stack's supervisor (scenario 9b), when the target runs one. */
  solver?: Pick<SupervisedStackSolver, "process" | "restarted">;
}

export interface ChaosOptions {
  /** The CI's short form: the scenarios marked short, with shorter faults. */
  short: boolean;
  /** Only the scenarios whose number is listed (all by default). */
  only?: readonly number[];
  /** The hub's ping interval (`ATTESTATION_PING_MS`) the target's API runs with. */
  pingMs: number;
  log(line: string): void;
}

/** How long a scenario may take to recover before it is reported as not recovered. */
const RECOVERY_LIMIT_MS = 120_000;
/** Jobs opened during a scenario must be finalized (or expired) within this after it recovered. */
const JOB_SETTLE_MS = 90_000;

/**
 * The chaos run (`npm run chaos`, docs/operations.md): puts a steady load on the target's API (a plain and
 * an attested Ethereum query and a plain Solana query, each every second, 7 of the demo key's 10 tokens a
 * second), and runs each scenario in turn: break, wait, repair, and measure until everything answers right
 * again. Returns one report per scenario. A restarted Solana endpoint is closed at the end; the target is
 * the caller's to stop.
 */
export async function runChaos(target: ChaosTarget, options: ChaosOptions): Promise<ScenarioReport[]> {
  const { devnet, network, stack } = target;
  const { pingMs } = options;
  let solana: SolanaRpcServer | undefined;
  const l2 = devnetProvider(devnet.l2.rpcUrl, devnet.l2.chainId);
  const l1 = devnetProvider(devnet.l1.rpcUrl, devnet.l1.chainId);
  try {
    const api = { url: stack.api!.baseUrl, key: stack.api!.apiKey };
    const evm = stack.demo!.evm[0];
    // 7 of the demo key's 10 tokens a second: the attested Solana query (5 more) is the soak's.
    const streams = demoStreams(stack, l1).filter((stream) => stream.name !== "svm attested");
    const load = new SteadyLoad(api, streams, 1_000);
    const jobs = new JobTracker(stack.contracts!.l2!.VerificationRegistry, stack.accounts!.consumer.privateKey, l2);
    const solanaPort = Number(new URL(network.solana.url).port);
    const context: ChaosContext = {
      load,
      api,
      jobs,
      openJob: () => jobs.request(evm.user_address, evm.contract_address),
      l1Node: devnet.l1Provider,
      evmHolding: { asset: evm.contract_address, owner: evm.user_address },
      nodesConnected: async (count) => {
        const response = await fetch(`${api.url}/attest/nodes`).catch(() => undefined);
        if (response?.ok !== true) return false;
        const { nodes } = (await response.json()) as { nodes: Array<{ connected: boolean }> };
        return nodes.filter((node) => node.connected).length >= count;
      },
      apiPid: network.api.pid,
      nodes: {
        count: network.nodes.length,
        pid: (index) => network.nodes[index].child.pid!,
        restarted: (index) => network.nodeRestarted(index),
      },
      redis: network.redis,
      postgres: target.postgres,
      solana: {
        restart: async () => {
          await (solana ?? network.solana).close();
          solana = await startSolanaRpcServer(network.ledger, solanaPort);
        },
      },
      l2Front: { interrupt: () => devnet.l2.front.interrupt() },
      solver: solverOf(target, l1, l2),
      pingMs,
      log: (line) => options.log(line),
    };
    load.start();
    // Everything answers before the first fault.
    await everyStreamRight(load, streams, performance.now());
    const reports: ScenarioReport[] = [];
    const unknown = options.only?.filter((number) => !SCENARIOS.some((scenario) => scenario.number === number)) ?? [];
    if (unknown.length > 0)
      throw new Error(`no scenario ${unknown.join(", ")} in this run (it has ${SCENARIOS.map((scenario) => scenario.number).join(", ")})`);
    for (const scenario of SCENARIOS) {
      if (options.only !== undefined ? !options.only.includes(scenario.number) : options.short && !scenario.short) continue;
      options.log(`Scenario ${scenario.name}…`);
      const answers = load.window();
      const failedBefore = jobs.failedRequests;
      const { faultEndedAt, notes, ready, measures, settle } = await scenario.run(context, options.short);
      const failedRequests = jobs.failedRequests - failedBefore;
      if (failedRequests > 0) notes.push(`${failedRequests} job request(s) not sent: the transaction failed (no job, nothing to lose)`);
      const recoveredAt = await recovered(load, streams, faultEndedAt, ready);
      answers.close();
      const [tally, settled] = await Promise.all([jobs.settle(JOB_SETTLE_MS), settle?.()]);
      reports.push({
        name: scenario.name,
        answers,
        jobs: tally,
        recoverySeconds: recoveredAt === undefined ? Number.POSITIVE_INFINITY : (recoveredAt - faultEndedAt) / 1000,
        notes: [...notes, ...(settled?.notes ?? []), ...wrongDetails(answers)],
        measures: { ...measures, ...settled?.measures },
      });
      options.log(formatRow(reports.at(-1)!));
    }
    await load.stop();
    return reports;
  } finally {
    await solana?.close();
    l1.destroy();
    l2.destroy();
  }
}

/** Resolves once each stream has answered right with a request sent at or after `from`. */
async function everyStreamRight(load: SteadyLoad, streams: readonly LoadStream[], from: number): Promise<number> {
  const answered = await Promise.all(
    streams.map((stream) =>
      load.next((outcome) => outcome.stream === stream.name && outcome.verdict === "right" && outcome.at - outcome.ms >= from),
    ),
  );
  return Math.max(...answered.map((outcome) => outcome.at));
}

/** When everything was right again after `from` (undefined past the limit). */
async function recovered(
  load: SteadyLoad,
  streams: readonly LoadStream[],
  from: number,
  ready?: () => Promise<boolean>,
): Promise<number | undefined> {
  let over = false;
  const limit = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), RECOVERY_LIMIT_MS).unref());
  const parts = (async () => {
    if (ready === undefined) return from;
    // Stops asking once the race is over: a scenario that never recovers must not keep polling.
    while (!over && !(await ready())) await new Promise((resolve) => setTimeout(resolve, 100));
    return performance.now();
  })();
  const answers = everyStreamRight(load, streams, from);
  try {
    return await Promise.race([Promise.all([parts, answers]).then(([partsAt, answersAt]) => Math.max(partsAt, answersAt)), limit]);
  } finally {
    over = true;
  }
}

function wrongDetails(answers: LoadWindow): string[] {
  const wrong = answers.tally().examples.filter((outcome) => outcome.verdict === "wrong");
  return [...new Set(wrong.map((outcome) => `wrong (${outcome.stream}): ${outcome.detail}`))].slice(0, 5);
}

/** The intent layer's part of the context (scenario 9b): the target's solver, and ETH orders from the stack's token holder. */
function solverOf(target: ChaosTarget, l1: Provider, l2: Provider): ChaosContext["solver"] {
  const { solver, stack, devnet } = target;
  if (solver === undefined) return undefined;
  return {
    pid: () => solver.process.child.pid!,
    restarted: () => solver.restarted(),
    orders: new FastWithdrawals({
      l1,
      l2,
      chains: {
        l1RpcUrl: devnet.l1.rpcUrl,
        l2RpcUrl: devnet.l2.rpcUrl,
        originSettler: stack.contracts!.l2!.OriginSettler,
        privateKey: stack.accounts!.tokenHolder.privateKey,
      },
      destinationSettler: stack.contracts!.l1!.DestinationSettler,
      feeBps: stack.solver!.minFeeBps,
    }),
  };
}

/** One line of the table: right / refused / wrong / unanswered answers, jobs, recovery. */
export function formatRow(report: ScenarioReport): string {
  const { right, refused, wrong, unanswered } = report.answers.tally();
  const recovery = Number.isFinite(report.recoverySeconds) ? `${report.recoverySeconds.toFixed(1)} s` : "not recovered";
  const { finalized, expired, lost } = report.jobs;
  return [
    `| ${report.name} | ${right} | ${refused} | ${wrong} | ${unanswered} | ${finalized} / ${expired} / ${lost} | ${recovery} |`,
    ...report.notes.map((note) => `|   ${note} | | | | | | |`),
  ].join("\n");
}

export const TABLE_HEADER =
  "| scenario | right | refused | wrong | unanswered | jobs finalized / expired / lost | recovery |\n|---|---:|---:|---:|---:|---:|---:|";
