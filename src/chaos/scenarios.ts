import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { Interface, type JsonRpcProvider } from "ethers";

import type { JobTally, JobTracker } from "./jobs.ts";
import { childrenOf } from "./processes.ts";
import type { Outcome, SteadyLoad } from "./load.ts";

/** What a scenario may break and watch: the running parts, the load and the jobs. */
export interface ChaosContext {
  load: SteadyLoad;
  /** The API and its demo key (a scenario's own subscriptions). */
  api: { url: string; key: string };
  jobs: JobTracker;
  /** Opens one job on a demo holding (the scenario's pending work). */
  openJob(): Promise<void>;
  /** anvil of the L1 directly (the Ethereum source): what a reorg is made on. */
  l1Node: JsonRpcProvider;
  /** The demo ERC-20 holding the load asks about, and its holder (an unlocked anvil account). */
  evmHolding: { asset: string; owner: string };
  /** Whether the hub has `count` nodes connected (GET /attest/nodes). */
  nodesConnected(count: number): Promise<boolean>;
  apiPid: number;
  nodes: {
    count: number;
    pid(index: number): number;
    /** Resolves once node `index` was restarted by the stack's supervisor. */
    restarted(index: number): Promise<unknown>;
  };
  redis?: { kill(): Promise<void>; restart(): Promise<void> };
  /** The API's key database when it is PostgreSQL (`restart` runs `whileDown` while it is away). */
  postgres?: { restart(whileDown?: () => Promise<void>): Promise<void> };
  solana: { restart(): Promise<void> };
  l2Front: { interrupt(): () => void };
  /** The hub's ping interval: a node silent longer is not counted (docs/attestations.md). */
  pingMs: number;
  log(line: string): void;
}

export interface ScenarioReport {
  name: string;
  outcomes: Outcome[];
  jobs: JobTally;
  /** Seconds from the end of the fault until every stream answered right again (and the parts were back). */
  recoverySeconds: number;
  /** What the scenario measured besides (the bars of issue 53), said. */
  notes: string[];
  /** The same, as figures a test can hold to its bars. */
  measures: Record<string, number>;
}

export interface Scenario {
  /** Its number in issue 53's list (what `--only` names). */
  number: number;
  name: string;
  /** Whether the CI's short form runs it. */
  short: boolean;
  /** Breaks something, waits, repairs it; returns when the fault ended and what it measured. */
  run(
    context: ChaosContext,
    short: boolean,
  ): Promise<{ faultEndedAt: number; notes: string[]; ready?: () => Promise<boolean>; measures?: Record<string, number> }>;
}

const seconds = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `condition` holds (asked every 100 ms). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await seconds(100);
}

/** Opens a job every `everyMs` while `during` runs: work pending through the fault. */
async function withJobs<T>(context: ChaosContext, everyMs: number, during: () => Promise<T>): Promise<T> {
  let on = true;
  const opener = (async () => {
    while (on) {
      await context.openJob();
      await seconds(everyMs);
    }
  })();
  try {
    return await during();
  } finally {
    on = false;
    await opener;
  }
}

export const SCENARIOS: Scenario[] = [
  {
    number: 1,
    name: "1. Redis killed, then restarted",
    short: true,
    async run(context, short) {
      const redis = context.redis;
      if (redis === undefined) throw new Error("the stack runs no Redis (redis-server is not installed)");
      const outage = await withJobs(context, 5_000, async () => {
        await redis.kill();
        const from = performance.now();
        await seconds(short ? 8_000 : 20_000);
        const during = context.load.since(from);
        await redis.restart();
        return during;
      });
      const plain = outage.filter((outcome) => !outcome.stream.includes("attested"));
      const right = plain.filter((outcome) => outcome.verdict === "right").length;
      const slowest = Math.max(0, ...plain.map((outcome) => outcome.ms));
      const rate = plain.length === 0 ? "-" : `${((100 * right) / plain.length).toFixed(1)}%`;
      return {
        faultEndedAt: performance.now(),
        notes: [`plain answers while Redis was down: ${right}/${plain.length} right (${rate}), slowest ${slowest} ms`],
        measures: { plainDuringOutage: plain.length, plainRightDuringOutage: right, plainSlowestMs: slowest },
      };
    },
  },
  {
    number: 2,
    name: "2. one API process killed",
    short: true,
    async run(context) {
      const workers = await childrenOf(context.apiPid);
      if (workers.length === 0) throw new Error("the API runs as one process: no worker to kill");
      await withJobs(context, 5_000, async () => {
        process.kill(workers[0], "SIGKILL");
        await seconds(3_000);
      });
      return { faultEndedAt: performance.now(), notes: [`killed worker ${workers[0]} of ${workers.length}`] };
    },
  },
  {
    number: 3,
    name: "3. one node killed, one paused (SIGSTOP)",
    short: true,
    async run(context, short) {
      const pauseMs = short ? context.pingMs + 5_000 : 60_000;
      const [killed, paused] = [context.nodes.pid(0), context.nodes.pid(1)];
      const restarted = context.nodes.restarted(0);
      const notes: string[] = [];
      const stoppedAt = await withJobs(context, 5_000, async () => {
        process.kill(killed, "SIGKILL");
        process.kill(paused, "SIGSTOP");
        const at = performance.now();
        try {
          await restarted;
          notes.push(`node 1 restarted by the supervisor ${((performance.now() - at) / 1000).toFixed(1)} s after its crash`);
          await seconds(Math.max(0, pauseMs - (performance.now() - at)));
        } finally {
          process.kill(paused, "SIGCONT");
        }
        return at;
      });
      const attested = context.load.since(stoppedAt).filter((outcome) => outcome.stream.includes("attested"));
      const count = (verdict: string) => attested.filter((outcome) => outcome.verdict === verdict).length;
      notes.push(`attested answers while node 2 was paused: ${count("right")} right, ${count("refused")} refused`);
      // Then the paused nodes are needed: two of three paused, the quorum (2) out of reach.
      await until(() => context.nodesConnected(context.nodes.count));
      const both = [context.nodes.pid(1), context.nodes.pid(2)];
      const pausedAt = performance.now();
      for (const pid of both) process.kill(pid, "SIGSTOP");
      try {
        await seconds(context.pingMs + 8_000);
      } finally {
        for (const pid of both) process.kill(pid, "SIGCONT");
      }
      // Sent once both had been silent past the ping interval and its 2 s allowance (their last pong at most a ping earlier).
      const silentFrom = pausedAt + context.pingMs + 2_000;
      const needed = context.load
        .since(pausedAt)
        .filter((outcome) => outcome.stream.includes("attested") && outcome.at - outcome.ms > silentFrom);
      const refused = needed.filter((outcome) => outcome.verdict === "refused");
      const slowest = Math.max(0, ...needed.map((outcome) => outcome.ms));
      notes.push(
        `nodes 2 and 3 paused: attested answers sent once they were silent past the ping interval: ${needed.length}, ` +
          `${refused.length} refused (503), slowest in ${slowest} ms`,
      );
      return {
        faultEndedAt: performance.now(),
        notes,
        ready: () => context.nodesConnected(context.nodes.count),
        measures: { attestedWhileSilent: needed.length, refusedWhileSilent: refused.length, slowestWhileSilentMs: slowest },
      };
    },
  },
  {
    number: 4,
    name: "4. L2 RPC unreachable for 15 s",
    short: false,
    async run(context) {
      await withJobs(context, 5_000, async () => {
        const restore = context.l2Front.interrupt();
        await seconds(15_000);
        restore();
      });
      return { faultEndedAt: performance.now(), notes: [], ready: () => context.nodesConnected(context.nodes.count) };
    },
  },
  {
    number: 5,
    name: "5. Solana endpoint restarted",
    short: false,
    async run(context) {
      await withJobs(context, 5_000, () => context.solana.restart());
      return { faultEndedAt: performance.now(), notes: [] };
    },
  },
  {
    number: 6,
    name: "6. L1 reorg of depth 3 under pending jobs",
    short: true,
    async run(context) {
      const { asset, owner } = context.evmHolding;
      const notes: string[] = [];
      // The replacing blocks move one unit of the holding away: what is right changes with the reorg.
      const transfer = new Interface(["function transfer(address,uint256)"]).encodeFunctionData("transfer", [BURN_ADDRESS, 1n]);
      await withJobs(context, 2_000, async () => {
        await seconds(4_000);
        await context.load.exclusive(async () => {
          const before = await context.l1Node.getBlock("latest");
          await context.l1Node.send("anvil_reorg", [3, [[{ from: owner, to: asset, data: transfer }, 0]]]);
          const after = await context.l1Node.getBlock(before!.number);
          notes.push(`L1 block ${before!.number} ${before!.hash!.slice(0, 10)}… replaced by ${after!.hash!.slice(0, 10)}…`);
        });
        await seconds(4_000);
      });
      return { faultEndedAt: performance.now(), notes };
    },
  },
  {
    number: 7,
    name: "7. PostgreSQL restarted under the API's processes",
    short: false,
    async run(context) {
      const postgres = context.postgres;
      if (postgres === undefined) throw new Error("the API's key database is not PostgreSQL here (postgresql is not installed)");
      const downFrom = performance.now();
      await withJobs(context, 5_000, () => postgres.restart(async () => void (await seconds(5_000))));
      const during = context.load.since(downFrom);
      const refused = during.filter((outcome) => outcome.verdict === "refused");
      const statuses = [...new Set(refused.map((outcome) => outcome.status))].join(", ");
      return {
        faultEndedAt: performance.now(),
        notes: [`while it was away for 5 s: ${refused.length} refused (${statuses || "none"}), never a 500`],
      };
    },
  },
  {
    number: 9,
    name: "9. the webhook sender killed mid-delivery",
    short: false,
    async run(context) {
      const { asset, owner } = context.evmHolding;
      const receiver = await HoldingReceiver.start();
      const notes: string[] = [];
      let id: string | undefined;
      try {
        const created = await fetch(`${context.api.url}/api/subscriptions`, {
          method: "POST",
          headers: { authorization: context.api.key, "content-type": "application/json" },
          body: JSON.stringify({ chain: "ethereum", owner, asset, url: receiver.url }),
        });
        if (created.status !== 201) throw new Error(`POST /api/subscriptions answered ${created.status}: ${await created.text()}`);
        id = ((await created.json()) as { id: string }).id;
        const transfer = () => context.l1Node.send("eth_sendTransaction", [{ from: owner, to: asset, data: moveOneUnit }]);
        // A first change, delivered as usual: the subscription is followed.
        await transfer();
        await receiver.delivered(1);
        // The second change's delivery is held by the receiver while every API worker is killed under it.
        receiver.holdNext = true;
        await transfer();
        await receiver.held;
        const workers = await childrenOf(context.apiPid);
        for (const worker of workers) process.kill(worker, "SIGKILL");
        const killedAt = performance.now();
        receiver.release();
        await receiver.delivered(2);
        notes.push(
          `killed ${workers.length} API worker(s) during a delivery; it came again and was answered ${((performance.now() - killedAt) / 1000).toFixed(1)} s later ` +
            `(the dead process's lease on it expires first); attempts received: ${receiver.attempts}`,
        );
        return {
          faultEndedAt: killedAt,
          notes,
          measures: { deliveriesAnswered: receiver.answered.length, lostDeliveries: 2 - Math.min(2, new Set(receiver.answered).size) },
        };
      } finally {
        if (id !== undefined)
          await fetch(`${context.api.url}/api/subscriptions/${id}`, {
            method: "DELETE",
            headers: { authorization: context.api.key },
          }).catch(() => undefined);
        await receiver.close();
      }
    },
  },
];

/** Where the reorg's transfer sends its unit (nobody's key). */
const BURN_ADDRESS = "0x000000000000000000000000000000000000dEaD";

const moveOneUnit = new Interface(["function transfer(address,uint256)"]).encodeFunctionData("transfer", [BURN_ADDRESS, 1n]);

/**
 * A webhook receiver that can hold one delivery unanswered (the sender mid-request), then answers every
 * delivery 200 and counts the distinct ones (by `Avn-Delivery-Id`).
 */
class HoldingReceiver {
  holdNext = false;
  attempts = 0;
  /** The ids of the deliveries answered 200, in order (a retried one again). */
  readonly answered: string[] = [];
  readonly held: Promise<void>;
  #heldArrived!: () => void;
  #heldResponse: ServerResponse | undefined;
  #waiters: Array<() => void> = [];
  readonly #server = createServer((request, response) => this.#serve(request, response));
  url = "";

  private constructor() {
    this.held = new Promise((resolve) => (this.#heldArrived = resolve));
  }

  static async start(): Promise<HoldingReceiver> {
    const receiver = new HoldingReceiver();
    await new Promise<void>((resolve) => receiver.#server.listen(0, "127.0.0.1", resolve));
    receiver.url = `http://127.0.0.1:${(receiver.#server.address() as AddressInfo).port}/hook`;
    return receiver;
  }

  /** Cuts the held request off (its sender is dead by then). */
  release(): void {
    this.#heldResponse?.destroy();
  }

  /** Resolves once `count` distinct deliveries were answered 200. */
  async delivered(count: number): Promise<void> {
    while (new Set(this.answered).size < count) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #serve(request: IncomingMessage, response: ServerResponse): void {
    request.resume();
    request.once("end", () => {
      this.attempts += 1;
      if (this.holdNext) {
        this.holdNext = false;
        this.#heldResponse = response;
        this.#heldArrived();
        return;
      }
      const id = String(request.headers["avn-delivery-id"] ?? `attempt-${this.attempts}`);
      response.writeHead(200).end();
      this.answered.push(id);
      for (const waiter of this.#waiters.splice(0)) waiter();
    });
  }
}
