import type { PeerObservation, QosReport } from "@avn/protocol/qos";

/** What one node measured in one epoch, kept until the epoch ends; the report's figures come from here. */
export class EpochMeasurements {
  /** Kept samples of each series: a day of one probe a minute, whatever the epoch's length. */
  static readonly MAX_SAMPLES = 1_440;

  readonly epoch: number;
  apiProbes = 0;
  apiCorrect = 0;
  apiErrors = 0;
  readonly apiLatencyMs: number[] = [];
  readonly evmSourceLatencyMs: number[] = [];
  readonly svmSourceLatencyMs: number[] = [];
  readonly evmHeadLagSeconds: number[] = [];

  constructor(epoch: number) {
    this.epoch = epoch;
  }

  /** Adds a sample to `series`, dropping the oldest beyond MAX_SAMPLES (a bounded memory). */
  static add(series: number[], value: number): void {
    series.push(value);
    if (series.length > EpochMeasurements.MAX_SAMPLES) series.shift();
  }

  /** The report's fields (`IQosReports.Report`), every one a whole number within uint32, with `peers` as counted. */
  report(peers: { peerRounds: number; peers: readonly PeerObservation[] } = { peerRounds: 0, peers: [] }): QosReport {
    return {
      epoch: this.epoch,
      apiProbes: this.apiProbes,
      apiCorrect: this.apiCorrect,
      apiErrors: this.apiErrors,
      apiLatencyP50Ms: percentile(this.apiLatencyMs, 50),
      apiLatencyP95Ms: percentile(this.apiLatencyMs, 95),
      evmSourceLatencyP50Ms: percentile(this.evmSourceLatencyMs, 50),
      svmSourceLatencyP50Ms: percentile(this.svmSourceLatencyMs, 50),
      evmHeadLagSeconds: percentile(this.evmHeadLagSeconds, 50),
      peerRounds: peers.peerRounds,
      peers: peers.peers,
    };
  }
}

const UINT32_MAX = 2 ** 32 - 1;

/** The nearest-rank percentile of `values`, rounded up to a whole number and capped at uint32; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return Math.min(UINT32_MAX, Math.max(0, Math.ceil(sorted[rank - 1])));
}
