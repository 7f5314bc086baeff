import type { Logger } from "pino";

import { MAX_PEER_OBSERVATIONS } from "@avn/protocol/constants";
import { epochAt, type PeerObservation } from "@avn/protocol/qos";

import { describeError } from "../../common/describe-error.ts";
import { MAX_ROUND_DEADLINE_MS, type RoundDone } from "../../common/hub-protocol.ts";
import type { OwnSignedAnswer } from "../../common/signed-answer.ts";
import { TokenBucket } from "../../common/token-bucket.ts";
import type { NodeMetrics } from "../health.ts";
import { EpochMeasurements, percentile } from "./measurements.ts";

/** How long a signed answer waits for its round's result: the longest round, and the bus's delays. */
export const RESULT_WAIT_MS = MAX_ROUND_DEADLINE_MS + 10_000;
/** Signed answers waiting for a result at most (a hub asking faster than that loses the oldest). */
export const MAX_WAITING_ROUNDS = 4_096;
/** Signatures recovered a second at most (about a millisecond each): a hub cannot make the node spend more. */
export const RECOVERIES_PER_SECOND = 200;
/** Uncached license reads (`isLiveOperatorOf`) a minute at most, and how long a read's answer is reused. */
export const LICENSE_READS_PER_MINUTE = 60;
export const LICENSE_READ_TTL_MS = 10 * 60_000;
/** Signer and license lists whose reads are kept at most. */
const MAX_CACHED_READS = 4_096;
/** Peer licenses tallied per epoch at most (memory); more are left out. */
export const MAX_TALLIED_PEERS = 1_024;

/** Why a round's result was counted or not: `node_peer_rounds_total{outcome}`. */
export type PeerRoundOutcome = "counted" | "unknown" | "not-winner" | "over-budget" | "failed";

export interface PeerRoundsOptions {
  /** This node's burner: its own signature is not a peer's. */
  self: string;
  /** The node's own licenses now: never tallied as peers. */
  licenses: () => readonly bigint[];
  /** The registry's epoch of a chain time (`EPOCHS_START`, `EPOCH_DURATION`). */
  epochOf: (issuedAt: bigint) => Promise<number>;
  /** `NodeRegistry.isLiveOperatorOf`: whether `signer` operates every one of `licenseIds`, all live. */
  isLiveOperatorOf: (signer: string, licenseIds: readonly bigint[]) => Promise<boolean>;
  metrics?: NodeMetrics;
  logger: Logger;
  /** The clock, in milliseconds (tests inject one). */
  now?: () => number;
}

interface PeerTally {
  /** Rounds counted since the license was first seen signing in the epoch (its own first one included). */
  observed: number;
  signed: number;
  signingMs: number[];
}

interface EpochTally {
  counted: number;
  peers: Map<bigint, PeerTally>;
}

/**
 * The node's view of its peers through the hub's rounds (docs/verification.md, "Its peers, through the
 * hub's rounds"). The node remembers each answer it signed; when the round's result comes (`roundDone`),
 * it counts the round only if its own signature is listed, recovers every other listed signature over the
 * struct it signed itself, and credits a license only when the recovered signer operates it, live
 * (`isLiveOperatorOf`). Nothing the hub says is taken on its word except the times. Per epoch (of the
 * struct's issue time): the rounds counted, and per peer license the rounds since it first signed, the
 * rounds it signed, and its signing times. `figures` gives them as the QoS report carries them.
 */
export class PeerRounds {
  readonly #options: PeerRoundsOptions;
  readonly #now: () => number;
  readonly #waiting = new Map<string, { own: OwnSignedAnswer; until: number }>();
  readonly #reads = new Map<string, { at: number; live: Promise<boolean> }>();
  readonly #recoveries: TokenBucket;
  readonly #licenseReads: TokenBucket;
  readonly #tallies = new Map<number, EpochTally>();
  #warnedFull = false;

  constructor(options: PeerRoundsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#recoveries = new TokenBucket(RECOVERIES_PER_SECOND, RECOVERIES_PER_SECOND, this.#now);
    this.#licenseReads = new TokenBucket(LICENSE_READS_PER_MINUTE / 60, LICENSE_READS_PER_MINUTE, this.#now);
  }

  /** The node signed `own` in round `id`: it waits for the round's result. */
  signed(id: string, own: OwnSignedAnswer): void {
    const now = this.#now();
    // The Map's order is the order of signing: expired and surplus entries are at its front.
    for (const [key, entry] of this.#waiting) {
      if (entry.until > now && this.#waiting.size < MAX_WAITING_ROUNDS) break;
      this.#waiting.delete(key);
    }
    this.#waiting.set(id, { own, until: now + RESULT_WAIT_MS });
  }

  /** A round's result from the hub (validated by the hub client): tallied when it checks out; never throws. */
  async done(done: RoundDone): Promise<PeerRoundOutcome> {
    let outcome: PeerRoundOutcome;
    try {
      outcome = await this.#tally(done);
    } catch (error) {
      // An L2 read failed: the round is not counted, for anyone (no peer is favoured).
      this.#options.logger.warn({ error: describeError(error) }, "a round's result could not be checked");
      outcome = "failed";
    }
    this.#options.metrics?.peerRounds.inc({ outcome });
    return outcome;
  }

  /** The report's peer fields for `epoch`: the rounds counted, and the most observed peers (at most 128), ascending. */
  figures(epoch: number): { peerRounds: number; peers: PeerObservation[] } {
    const tally = this.#tallies.get(epoch);
    if (tally === undefined) return { peerRounds: 0, peers: [] };
    const peers = [...tally.peers].map(([licenseId, peer]) => ({
      licenseId,
      roundsObserved: peer.observed,
      roundsSigned: peer.signed,
      medianSigningMs: percentile(peer.signingMs, 50),
    }));
    return {
      peerRounds: tally.counted,
      peers: peers
        .sort((a, b) => b.roundsObserved - a.roundsObserved)
        .slice(0, MAX_PEER_OBSERVATIONS)
        .sort((a, b) => (a.licenseId < b.licenseId ? -1 : 1)),
    };
  }

  async #tally(done: RoundDone): Promise<PeerRoundOutcome> {
    const waiting = this.#waiting.get(done.id);
    // Not signed here, signed too long ago, or a second result for the round: nothing to check it against.
    if (waiting === undefined || waiting.until <= this.#now()) return "unknown";
    this.#waiting.delete(done.id);
    const { own } = waiting;
    const ownIds = own.licenseIds.join(",");
    const mine = done.signatures.some(
      (entry) => entry.signature.toLowerCase() === own.signature.toLowerCase() && entry.licenseIds.join(",") === ownIds,
    );
    // Whatever the hub says of others, a round whose winning struct this node did not sign is not its to count.
    if (!mine) return "not-winner";
    const others = uniqueBy(
      done.signatures.filter((entry) => entry.signature.toLowerCase() !== own.signature.toLowerCase()),
      (entry) => entry.signature.toLowerCase(),
    );
    if (!this.#recoveries.take(others.length)) return "over-budget";
    const recovered: Array<{ signer: string; licenseIds: bigint[]; elapsedMs: number }> = [];
    for (const entry of others) {
      const licenseIds = entry.licenseIds.map(BigInt);
      // What an honest node signs: its license ids strictly ascending (the verifier refuses a repeated one).
      if (!licenseIds.every((id, index) => index === 0 || licenseIds[index - 1] < id)) continue;
      const signer = own.recover(licenseIds, entry.signature);
      if (signer === undefined || signer.toLowerCase() === this.#options.self.toLowerCase()) continue;
      recovered.push({ signer, licenseIds, elapsedMs: entry.elapsedMs });
    }
    const uncached = recovered.filter((entry) => this.#cachedRead(entry.signer, entry.licenseIds) === undefined).length;
    if (uncached > 0 && !this.#licenseReads.take(uncached)) return "over-budget";
    const licensed = await Promise.all(recovered.map((entry) => this.#isLiveOperatorOf(entry.signer, entry.licenseIds)));
    const epoch = await this.#options.epochOf(own.issuedAt);
    const tally = this.#epoch(epoch);
    // A full list says who did not sign: every license seen before is observed in this round. A truncated
    // one (more signers than fit a frame) says nothing of those left out: only the listed are observed.
    if (!done.truncated) for (const peer of tally.peers.values()) peer.observed += 1;
    const ownLicenses = new Set(this.#options.licenses());
    const credited = new Set<bigint>();
    recovered.forEach((entry, index) => {
      if (!licensed[index]) return;
      for (const licenseId of entry.licenseIds) {
        if (ownLicenses.has(licenseId) || credited.has(licenseId)) continue;
        let peer = tally.peers.get(licenseId);
        if (peer === undefined) {
          if (tally.peers.size >= MAX_TALLIED_PEERS) {
            if (!this.#warnedFull) this.#options.logger.warn({ max: MAX_TALLIED_PEERS }, "too many peer licenses to tally this epoch");
            this.#warnedFull = true;
            continue;
          }
          peer = { observed: 1, signed: 0, signingMs: [] };
          tally.peers.set(licenseId, peer);
        } else if (done.truncated) peer.observed += 1;
        credited.add(licenseId);
        peer.signed += 1;
        EpochMeasurements.add(peer.signingMs, entry.elapsedMs);
      }
    });
    tally.counted += 1;
    return "counted";
  }

  /** The tally of `epoch`, started when new; only this epoch's and the one before are kept. */
  #epoch(epoch: number): EpochTally {
    let tally = this.#tallies.get(epoch);
    if (tally === undefined) {
      tally = { counted: 0, peers: new Map() };
      this.#tallies.set(epoch, tally);
      this.#warnedFull = false;
      for (const kept of this.#tallies.keys()) if (kept < epoch - 1) this.#tallies.delete(kept);
    }
    return tally;
  }

  #cachedRead(signer: string, licenseIds: readonly bigint[]): Promise<boolean> | undefined {
    const entry = this.#reads.get(readKey(signer, licenseIds));
    return entry !== undefined && this.#now() - entry.at < LICENSE_READ_TTL_MS ? entry.live : undefined;
  }

  /** One read per signer and license list, reused for LICENSE_READ_TTL_MS (a failed read is not kept). */
  #isLiveOperatorOf(signer: string, licenseIds: readonly bigint[]): Promise<boolean> {
    const cached = this.#cachedRead(signer, licenseIds);
    if (cached !== undefined) return cached;
    const key = readKey(signer, licenseIds);
    const entry = { at: this.#now(), live: this.#options.isLiveOperatorOf(signer, licenseIds) };
    entry.live.catch(() => this.#reads.get(key) === entry && this.#reads.delete(key));
    this.#reads.delete(key); // re-inserted last: the Map's order is the eviction order
    this.#reads.set(key, entry);
    if (this.#reads.size > MAX_CACHED_READS) this.#reads.delete(this.#reads.keys().next().value!);
    return entry.live;
  }
}

/**
 * The registry's epoch of a chain time, from its `EPOCHS_START` and `EPOCH_DURATION` (immutables, read once;
 * a failed read is tried again on the next call).
 */
export function registryEpochs(
  registry: () => { EPOCHS_START(): Promise<bigint>; EPOCH_DURATION(): Promise<bigint> },
): (at: bigint) => Promise<number> {
  let bounds: Promise<[bigint, bigint]> | undefined;
  return async (at) => {
    const read = (bounds ??= Promise.all([registry().EPOCHS_START(), registry().EPOCH_DURATION()]));
    read.catch(() => bounds === read && (bounds = undefined));
    const [start, duration] = await read;
    return epochAt(Number(at), Number(start), Number(duration)).epoch;
  };
}

function readKey(signer: string, licenseIds: readonly bigint[]): string {
  return `${signer.toLowerCase()}:${licenseIds.join(",")}`;
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(key(item)) && seen.add(key(item)));
}
