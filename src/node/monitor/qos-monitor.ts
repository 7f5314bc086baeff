import { getAddressDecoder } from "@solana/kit";
import { dataSlice, getAddress, getBytes, Interface, type Provider } from "ethers";
import type { Logger } from "pino";

import { SourceChain } from "@avn/protocol/constants";
import { QOS_REPORT_TUPLE } from "@avn/protocol/qos-logs";

import type { VerificationRegistry } from "../../../typechain-types/index.ts";
import type { JsonRpc } from "../../chains/evm/balance-slot.ts";
import { describeError } from "../../common/describe-error.ts";
import { PollingLoop } from "../../common/polling-loop.ts";
import { answerJob, type JobQuery, type SourceReaders } from "../answers.ts";
import type { NodeMetrics } from "../health.ts";
import type { TxSender } from "../tx-sender.ts";
import { EpochMeasurements } from "./measurements.ts";
import type { PeerRounds } from "./peer-rounds.ts";

const QOS_REPORTS = new Interface([`function report(uint256 licenseId, ${QOS_REPORT_TUPLE} report_)`]);

/** How far back the API probe looks for jobs to ask the API about again (about 10 minutes of 2 s blocks). */
export const PROBE_LOOKBACK_BLOCKS = 300;
/** An API answer slower than this is a failed probe. */
export const API_PROBE_TIMEOUT_MS = 10_000;

export interface QosMonitorOptions {
  /** The registry on the L2 endpoint in use: the epoch, and recent jobs to probe the API with. */
  registry: () => VerificationRegistry;
  l2: () => Provider;
  readers: SourceReaders;
  evmRpc: JsonRpc;
  solanaHealth: () => Promise<void>;
  /** The API and this node's probe key; without them only the sources are probed. */
  api?: { url: string; key: string };
  qosReports: string;
  licenses: () => readonly bigint[];
  sender: Pick<TxSender, "send">;
  probeIntervalMs: number;
  reportIntervalMs: number;
  /** The peers the node saw sign in the hub's rounds (absent: a node without the hub reports none). */
  peers?: Pick<PeerRounds, "figures">;
  metrics: NodeMetrics;
  logger: Logger;
  onError: () => void;
  random?: () => number;
}

/**
 * The node as a monitor (docs/verification.md, "What the nodes measure"): every `probeIntervalMs` it
 * times its own sources (the EVM head's latency and age, Solana's health call) and asks the API, with its
 * own probe key, a question a recent job asked: the answer is correct when it equals the node's own read
 * just before or just after. Every `reportIntervalMs` it publishes the epoch's figures so far, with the
 * peers it saw sign in the hub's rounds (`PeerRounds`), to `QosReports`, as the operator of its first live
 * license, through its one transaction sender.
 */
export class QosMonitor {
  readonly #options: QosMonitorOptions;
  readonly #log: Logger;
  readonly #probes: PollingLoop<void>;
  readonly #reports: PollingLoop<void>;
  #measurements: EpochMeasurements | undefined;

  constructor(options: QosMonitorOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: "qos-monitor" });
    const onError = (what: string) => (error: unknown) => {
      this.#log.warn({ error: describeError(error) }, `${what} failed; trying again at the next tick`);
      options.onError();
    };
    this.#probes = new PollingLoop(() => this.probe(), options.probeIntervalMs, onError("QoS probe"));
    this.#reports = new PollingLoop(() => this.report().then(() => undefined), options.reportIntervalMs, onError("QoS report"));
  }

  start(): void {
    this.#probes.start();
    this.#reports.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.#probes.stop(), this.#reports.stop()]);
  }

  /** This epoch's measurements so far (a new epoch starts them again). */
  async measurements(): Promise<EpochMeasurements> {
    const epoch = Number(await this.#options.registry().currentEpoch());
    if (this.#measurements?.epoch !== epoch) this.#measurements = new EpochMeasurements(epoch);
    return this.#measurements;
  }

  /** One round of probes: the sources, then the API. */
  async probe(): Promise<void> {
    const measured = await this.measurements();
    await this.#probeSources(measured);
    if (this.#options.api !== undefined) await this.#probeApi(measured, this.#options.api);
  }

  /** Sends the epoch's figures so far as a report; resolves with what was sent, or undefined when there is no license or nothing measured. */
  async report(): Promise<{ licenseId: bigint; fields: ReturnType<EpochMeasurements["report"]> } | undefined> {
    const [licenseId] = this.#options.licenses();
    if (licenseId === undefined) return undefined;
    const measured = await this.measurements();
    const peers = this.#options.peers?.figures(measured.epoch) ?? { peerRounds: 0, peers: [] };
    // Nothing measured yet this epoch (just started, or every probe failed to reach anything): nothing to say.
    if (
      measured.apiProbes === 0 &&
      measured.evmSourceLatencyMs.length === 0 &&
      measured.svmSourceLatencyMs.length === 0 &&
      peers.peerRounds === 0
    )
      return undefined;
    const fields = measured.report(peers);
    const data = QOS_REPORTS.encodeFunctionData("report", [licenseId, fields]);
    const { outcome } = await this.#options.sender.send("qosReport", this.#options.qosReports, data);
    void outcome.then((result) => this.#options.metrics.transactions.inc({ kind: "qosReport", outcome: result }));
    this.#log.info({ licenseId: licenseId.toString(), ...fields, peers: fields.peers.length }, "QoS report sent");
    return { licenseId, fields };
  }

  async #probeSources(measured: EpochMeasurements): Promise<void> {
    const { metrics } = this.#options;
    const evmStarted = performance.now();
    try {
      const head = await this.#options.evmRpc.request<{ timestamp: string } | null>("eth_getBlockByNumber", ["latest", false]);
      EpochMeasurements.add(measured.evmSourceLatencyMs, performance.now() - evmStarted);
      if (head !== null) EpochMeasurements.add(measured.evmHeadLagSeconds, Math.max(0, Date.now() / 1000 - Number(BigInt(head.timestamp))));
      metrics.qosProbes.inc({ target: "evm-source", outcome: "ok" });
    } catch (error) {
      metrics.qosProbes.inc({ target: "evm-source", outcome: "error" });
      this.#log.warn({ error: describeError(error) }, "EVM source probe failed");
    }
    const svmStarted = performance.now();
    try {
      await this.#options.solanaHealth();
      EpochMeasurements.add(measured.svmSourceLatencyMs, performance.now() - svmStarted);
      metrics.qosProbes.inc({ target: "svm-source", outcome: "ok" });
    } catch (error) {
      metrics.qosProbes.inc({ target: "svm-source", outcome: "error" });
      this.#log.warn({ error: describeError(error) }, "Solana source probe failed");
    }
  }

  async #probeApi(measured: EpochMeasurements, api: { url: string; key: string }): Promise<void> {
    const job = await this.#recentJob();
    if (job === undefined) return; // nothing asked lately: nothing to ask the API again
    const request = apiRequestOf(job);
    if (request === undefined) return;
    const before = await answerJob(job, this.#options.readers);
    const started = performance.now();
    let answer: { balance: bigint } | "refused" | undefined;
    try {
      const response = await fetch(`${api.url.replace(/\/+$/, "")}${request.path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: api.key },
        body: JSON.stringify(request.body),
        signal: AbortSignal.timeout(API_PROBE_TIMEOUT_MS),
      });
      const text = await response.text();
      // The balance is read as an exact integer: JSON.parse would round one above 2^53.
      const match = response.ok ? /"balance"\s*:\s*(\d+)/.exec(text) : null;
      if (match !== null) answer = { balance: BigInt(match[1]) };
      // 404 (no token there) or 400 (an ERC-1155 contract, which needs a token id no job names): a refusal.
      else if (response.status === 404 || response.status === 400) answer = "refused";
    } catch {
      // A timeout or a refused connection: a failed probe, counted below.
    }
    measured.apiProbes++;
    if (answer === undefined) {
      measured.apiErrors++;
      this.#options.metrics.qosProbes.inc({ target: "api", outcome: "error" });
      return;
    }
    EpochMeasurements.add(measured.apiLatencyMs, performance.now() - started);
    const after = await answerJob(job, this.#options.readers);
    // Correct: the balance the node read just before or just after, or a refusal of what the node cannot answer either.
    const correct = [before, after].some((own) =>
      answer === "refused" ? own.kind === "unanswerable" : own.kind === "answer" && own.answer.balance === answer.balance,
    );
    if (correct) measured.apiCorrect++;
    this.#options.metrics.qosProbes.inc({ target: "api", outcome: correct ? "correct" : "wrong" });
    if (!correct)
      this.#log.warn(
        { request: request.body, api: answer === "refused" ? answer : answer.balance.toString() },
        "the API's answer differs from this node's reads",
      );
  }

  /** A job of the last PROBE_LOOKBACK_BLOCKS blocks, at random, or undefined when there is none. */
  async #recentJob(): Promise<JobQuery | undefined> {
    const registry = this.#options.registry();
    const head = await this.#options.l2().getBlockNumber();
    const events = await registry.queryFilter(registry.filters.VerificationRequested(), Math.max(0, head - PROBE_LOOKBACK_BLOCKS), head);
    if (events.length === 0) return undefined;
    const event = events[Math.floor((this.#options.random ?? Math.random)() * events.length)];
    return { chain: Number(event.args.chain), owner: event.args.owner, asset: event.args.asset };
  }
}

/** The API request that asks what `job` asked, or undefined for a job the API cannot be asked (malformed). */
export function apiRequestOf(job: JobQuery): { path: string; body: Record<string, string> } | undefined {
  if (job.chain === SourceChain.ethereum) {
    if (BigInt(dataSlice(job.owner, 0, 12)) !== 0n || BigInt(dataSlice(job.asset, 0, 12)) !== 0n) return undefined;
    return {
      path: "/api/ccq-evm",
      body: { user_address: getAddress(dataSlice(job.owner, 12)), contract_address: getAddress(dataSlice(job.asset, 12)) },
    };
  }
  if (job.chain === SourceChain.solana) {
    const decoder = getAddressDecoder();
    return {
      path: "/api/ccq-svm",
      body: { owner_address: decoder.decode(getBytes(job.owner)), token_mint_address: decoder.decode(getBytes(job.asset)) },
    };
  }
  return undefined;
}
