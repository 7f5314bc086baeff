import { Worker } from "node:worker_threads";

import { readDemoStack, type DemoStack } from "../common/stack-file.ts";
import { HUB_PATH } from "../common/hub-protocol.ts";
import type { FloodCounts, FloodInput } from "./hub-flood-thread.ts";
import { summarize } from "./bridge-timing.ts";

export interface FloodOptions {
  projectRoot: string;
  /** Unauthenticated WebSockets opened and held (default 1,000). */
  sockets?: number;
  /** Hellos signed by throw-away keys (default 200: half the keys send twice). */
  hellos?: number;
  /** Attested answers asked for in each phase (quiet, then under the flood). */
  queries?: number;
  log?: (line: string) => void;
}

export interface AttestedTiming {
  phase: "quiet" | "flood";
  answers: number;
  failures: number;
  p50Ms: number;
  p95Ms: number;
}

export interface FloodResult {
  timings: AttestedTiming[];
  /** How the unauthenticated sockets ended: `open` (got a challenge, held), `http 503`, `http 429`, `error`. */
  sockets: Record<string, number>;
  /** How the hellos ended: the close code (or `http <status>` when refused before the challenge). */
  hellos: Record<string, number>;
  /** Hellos that reached the hub's checks (got a challenge and were answered). */
  hellosAnswered: number;
  /** `api_attestation_l2_requests_total{purpose="login"}` during the flood, summed over the API's processes. */
  l2Requests: number;
  /** `api_attestation_connections_refused_total` by reason, the flood's share. */
  refusals: Record<string, number>;
}

// The demo key's bucket: 100 tokens, 10 a second; an attested answer takes 5. Two a second keeps it full.
const PACE_MS = 500;

/**
 * The hub under a login flood, against the running stack (`npm start`): attested answers timed while the
 * hub is quiet, then again while `sockets` unauthenticated WebSockets are opened and held and `hellos`
 * logins signed by throw-away keys arrive, with what each refusal cost (the hub's L2 requests, from its
 * own metrics).
 */
export async function measureHubFlood(options: FloodOptions): Promise<FloodResult> {
  const log = options.log ?? (() => undefined);
  const stack = await readDemoStack(options.projectRoot);
  const queries = options.queries ?? 30;
  const hubUrl = `${stack.api.baseUrl.replace(/^http/, "ws")}${HUB_PATH}`;

  log(`quiet: ${queries} attested answers, one every ${PACE_MS} ms`);
  const quiet = await timeAttested(stack, queries, "quiet");
  const before = await scrape(stack.api.baseUrl);

  log(`flood: ${options.sockets ?? 1_000} sockets and ${options.hellos ?? 200} hellos while ${queries} attested answers are asked for`);
  // In a thread of its own, so that signing hellos and opening sockets does not delay this thread's
  // timing of the attested answers: what is measured is the hub under the flood, not the client.
  const flood = runFloodThread({ hubUrl, sockets: options.sockets ?? 1_000, hellos: options.hellos ?? 200 });
  const underFlood = await timeAttested(stack, queries, "flood");
  const { sockets, hellos, hellosAnswered } = await flood;
  const after = await scrape(stack.api.baseUrl);
  const refusals: Record<string, number> = {};
  for (const [reason, value] of after.refusals) {
    const delta = value - (before.refusals.get(reason) ?? 0);
    if (delta > 0) refusals[reason] = delta;
  }
  return { timings: [quiet, underFlood], sockets, hellos, hellosAnswered, l2Requests: after.l2Requests - before.l2Requests, refusals };
}

/** `count` attested answers, alternating the first Ethereum and Solana demo holding, one every PACE_MS. */
async function timeAttested(stack: DemoStack, count: number, phase: AttestedTiming["phase"]): Promise<AttestedTiming> {
  const [evm] = stack.demo.evm;
  const [svm] = stack.demo.svm;
  const requests = [
    ["/api/ccq-evm", { user_address: evm.user_address, contract_address: evm.contract_address }],
    ["/api/ccq-svm", { owner_address: svm.owner_address, token_mint_address: svm.token_mint_address }],
  ] as const;
  const latencies: number[] = [];
  let failures = 0;
  for (let index = 0; index < count; index += 1) {
    const paced = new Promise((resolve) => setTimeout(resolve, PACE_MS));
    const [path, body] = requests[index % 2];
    const started = performance.now();
    const response = await fetch(`${stack.api.baseUrl}${path}?attest=true`, {
      method: "POST",
      headers: { authorization: stack.api.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    }).catch(() => undefined);
    latencies.push(performance.now() - started);
    if (response?.status !== 200) failures += 1;
    await response?.arrayBuffer();
    await paced;
  }
  const { medianMs, p95Ms } = summarize(phase, latencies);
  return { phase, answers: count - failures, failures, p50Ms: medianMs, p95Ms };
}

/** Runs src/bench/hub-flood-thread.ts in a worker thread; resolves with what it counted. */
function runFloodThread(input: FloodInput): Promise<FloodCounts> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(new URL("./hub-flood-thread.ts", import.meta.url), { workerData: input });
    thread.once("message", (counts: FloodCounts) => resolve(counts));
    thread.once("error", reject);
    thread.once("exit", (code) => reject(new Error(`the flood thread exited with code ${code}`)));
  });
}

/** The hub's L2 request count and refusals by reason, from `/metrics` (summed over a cluster's workers). */
async function scrape(baseUrl: string): Promise<{ l2Requests: number; refusals: Map<string, number> }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const refusals = new Map<string, number>();
  let l2Requests = 0;
  for (const line of text.split("\n")) {
    const refused = /^api_attestation_connections_refused_total\{reason="([^"]+)"\} (\S+)/.exec(line);
    if (refused !== null) refusals.set(refused[1], Number(refused[2]));
    const l2 = /^api_attestation_l2_requests_total\{purpose="login"\} (\S+)/.exec(line);
    if (l2 !== null) l2Requests = Number(l2[1]);
  }
  return { l2Requests, refusals };
}
