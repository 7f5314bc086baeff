import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { Interface, type JsonRpcProvider } from "ethers";

import type { JobTally, JobTracker } from "./jobs.ts";
import type { LoadWindow, Outcome, SteadyLoad } from "./load.ts";
import type { FastWithdrawals, OrderEnd } from "./orders.ts";
import { childrenOf } from "./processes.ts";

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
  /** The intent layer's solver under the stack's supervisor, and orders for it to fill (absent: the stack runs none). */
  solver?: {
    pid(): number;
    /** Resolves once the supervisor has restarted it after a crash. */
    restarted(): Promise<unknown>;
    orders: FastWithdrawals;
  };
  /** The hub's ping interval: a node silent longer is not counted (docs/attestations.md). */
  pingMs: number;
  log(line: string): void;
}

export interface ScenarioReport {
  name: string;
  /** The load's answers from the scenario's start until it recovered. */
  answers: LoadWindow;
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
  /**
   * Breaks something, waits, repairs it; returns when the fault ended, what it measured, whether the parts it broke
   * are back (`ready`, asked until it says yes), and what of its own work is still to be awaited after the recovery
   * (`settle`, as the jobs are).
   */
  run(
    context: ChaosContext,
    short: boolean,
  ): Promise<{
    faultEndedAt: number;
    notes: string[];
    ready?: () => Promise<boolean>;
    measures?: Record<string, number>;
    settle?: () => Promise<{ notes: string[]; measures: Record<string, number> }>;
  }>;
}

const seconds = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Attested requests sent once two nodes were silent, answered before they resume: what scenario 3's bar is judged on. */
const SILENT_SAMPLES = 6;
/** The longest scenario 3 keeps two nodes paused waiting for those (after the ping interval): fewer then, it says so. */
const SILENT_SAMPLES_LIMIT_MS = 40_000;

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
      const plain = await withJobs(context, 5_000, async () => {
        await redis.kill();
        const during = context.load.window((outcome) => !outcome.stream.includes("attested"));
        await seconds(short ? 8_000 : 20_000);
        during.close();
        await redis.restart();
        return during.tally();
      });
      const { total, right, slowestMs: slowest } = plain;
      const rate = total === 0 ? "-" : `${((100 * right) / total).toFixed(1)}%`;
      return {
        faultEndedAt: performance.now(),
        notes: [`plain answers while Redis was down: ${right}/${total} right (${rate}), slowest ${slowest} ms`],
        measures: { plainDuringOutage: total, plainRightDuringOutage: right, plainSlowestMs: slowest },
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
      const attested = await withJobs(context, 5_000, async () => {
        process.kill(killed, "SIGKILL");
        process.kill(paused, "SIGSTOP");
        const at = performance.now();
        const whilePaused = context.load.window((outcome) => outcome.stream.includes("attested"));
        try {
          await restarted;
          notes.push(`node 1 restarted by the supervisor ${((performance.now() - at) / 1000).toFixed(1)} s after its crash`);
          await seconds(Math.max(0, pauseMs - (performance.now() - at)));
        } finally {
          process.kill(paused, "SIGCONT");
        }
        return whilePaused;
      });
      const { right, refused } = attested.close().tally();
      notes.push(`attested answers while node 2 was paused: ${right} right, ${refused} refused`);
      // Then the paused nodes are needed: two of three paused, the quorum (2) out of reach.
      await until(() => context.nodesConnected(context.nodes.count));
      const both = [context.nodes.pid(1), context.nodes.pid(2)];
      const pausedAt = performance.now();
      // Sent once both had been silent past the ping interval and its 2 s allowance (their last pong at most a ping earlier).
      const silentFrom = pausedAt + context.pingMs + 2_000;
      const sentWhileSilent = (outcome: Outcome) => outcome.stream.includes("attested") && outcome.at - outcome.ms > silentFrom;
      const silent = context.load.window(sentWhileSilent);
      // Paused until that many such requests have been answered: a fixed pause counted none once, in a loaded
      // suite, where the stream's requests come late (one at a time, the first held by its round's deadline).
      let answered = 0;
      const samples = context.load.next((outcome) => sentWhileSilent(outcome) && ++answered >= SILENT_SAMPLES);
      for (const pid of both) process.kill(pid, "SIGSTOP");
      try {
        await Promise.race([samples, seconds(context.pingMs + SILENT_SAMPLES_LIMIT_MS)]);
      } finally {
        for (const pid of both) process.kill(pid, "SIGCONT");
      }
      const needed = silent.close().tally();
      notes.push(
        `nodes 2 and 3 paused: attested answers sent once they were silent past the ping interval: ${needed.total}, ` +
          `${needed.refused} refused (503), slowest in ${needed.slowestMs} ms`,
      );
      return {
        faultEndedAt: performance.now(),
        notes,
        ready: () => context.nodesConnected(context.nodes.count),
        measures: { attestedWhileSilent: needed.total, refusedWhileSilent: needed.refused, slowestWhileSilentMs: needed.slowestMs },
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
      const during = context.load.window();
      await withJobs(context, 5_000, () => postgres.restart(async () => void (await seconds(5_000))));
      const { refused, refusedStatuses } = during.close().tally();
      return {
        faultEndedAt: performance.now(),
        notes: [`while it was away for 5 s: ${refused} refused (${refusedStatuses.join(", ") || "none"}), never a 500`],
      };
    },
  },
  {
    number: 9,
    name: "9a. the webhook sender killed mid-delivery",
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
  {
    number: 9,
    name: "9b. the solver killed mid-fill",
    short: false,
    async run(context) {
      const solver = context.solver;
      if (solver === undefined) throw new Error("the stack runs no solver (it runs one with the network)");
      const { orders } = solver;
      // A fast withdrawal, and the solver killed as soon as its fill is on L1, before the L2 repays it: the restarted
      // solver must settle it from its journal, not fill it again.
      const first = await orders.open(ORDER_WAIT_MS);
      let firstEnded: OrderEnd | undefined;
      void first.ended.then((end) => (firstEnded = end));
      await until(async () => firstEnded !== undefined || (await orders.filled(first.orderId)));
      if (!(await orders.filled(first.orderId))) throw new Error(`the solver did not fill order 1 (${firstEnded})`);
      let restartedAt: number | undefined;
      solver.restarted().then(
        () => (restartedAt = performance.now()),
        () => undefined,
      );
      process.kill(solver.pid(), "SIGKILL");
      const killedAt = performance.now();
      const settledBeforeKill = await orders.settled(first.orderId);
      // Two more opened right after the kill, one after the other: work the restarted solver has to find. The
      // scenario returns at once, so that the recovery is timed from the kill while they are opened.
      const later: Array<{ orderId: string; ended: Promise<OrderEnd>; openedAt: number }> = [];
      const opening = (async () => {
        for (let index = 0; index < 2; index++) later.push({ ...(await orders.open(ORDER_WAIT_MS)), openedAt: performance.now() });
      })();
      opening.catch(() => undefined); // awaited in settle(), which says why it failed
      const after = (at: number) => `${((at - killedAt) / 1000).toFixed(1)} s`;
      return {
        faultEndedAt: killedAt,
        notes: [],
        // Recovered at the restarted solver's next piece of work: the first order settled, or a later one filled.
        ready: async () =>
          (!settledBeforeKill && (await orders.settled(first.orderId))) ||
          (await Promise.all(later.map((order) => orders.filled(order.orderId)))).includes(true),
        async settle() {
          await opening;
          const all = [first, ...later];
          const ends = await Promise.all(all.map((order) => order.ended));
          const twice = (await Promise.all(all.map((order) => orders.fills(order.orderId)))).filter((fills) => fills > 1).length;
          const count = (end: OrderEnd) => ends.filter((ended) => ended === end).length;
          return {
            notes: [
              `SIGKILL once order 1's fill was on L1, ${settledBeforeKill ? "after" : "before"} the L2 repaid it; ` +
                `the supervisor restarted it ${restartedAt === undefined ? "never" : `${after(restartedAt)} later`}; ` +
                `orders 2 and 3 opened ${later.map((order) => after(order.openedAt)).join(" and ")} after the kill`,
              `orders: ${count("settled")} filled and settled, ${count("refundable")} refundable, ${count("lost")} lost; ` +
                `filled twice: ${twice}`,
            ],
            measures: {
              ordersSettled: count("settled"),
              ordersRefundable: count("refundable"),
              ordersLost: count("lost"),
              ordersFilledTwice: twice,
            },
          };
        },
      };
    },
  },
];

/** How long an order of scenario 9b is followed before it counts as lost (as a job is, after the recovery). */
const ORDER_WAIT_MS = 120_000;

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
