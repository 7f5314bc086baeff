import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";

import { address, getAddressDecoder, getAddressEncoder } from "@solana/kit";
import { getAddress, hexlify, NonceManager, type ContractTransactionResponse } from "ethers";
import { z } from "zod";

import type { VerificationRegistry } from "../../typechain-types/index.ts";

/** What a challenge asks about: an owner's holding of an asset, on the EVM source or on Solana. */
export interface ChallengeTarget {
  chain: "evm" | "svm";
  /** An EVM address, or a Solana public key in base58. */
  owner: string;
  asset: string;
}

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "an EVM address");
const solanaKey = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, "a Solana public key in base58");

/**
 * The targets file (`CHALLENGE_TARGETS`): holdings the challenger may ask about. None may be a holding an
 * integrator asks about in the open (the demo holdings): a challenge must look like any job, and its
 * answer must not be known in advance by anyone reading the public demo.
 */
export const challengeTargetsSchema = z
  .array(
    z.discriminatedUnion("chain", [
      z.object({ chain: z.literal("evm"), owner: evmAddress, asset: evmAddress }),
      z.object({ chain: z.literal("svm"), owner: solanaKey, asset: solanaKey }),
    ]),
  )
  .min(1, "at least one target");

/** One in this many challenges asks about a fresh random owner of a target's asset (an answer of 0 no one held). */
export const FRESH_OWNER_ODDS = 4;

/** A job request the challenger sent, with the job id its receipt gave. */
export interface SentChallenge {
  target: ChallengeTarget;
  jobId: bigint;
}

export interface ChallengerOptions {
  /** The registry, connected to the challenger's signer (a NonceManager: a burst is sent without waiting). */
  registry: VerificationRegistry;
  targets: readonly ChallengeTarget[];
  meanIntervalMs: number;
  burstMin: number;
  burstMax: number;
  /** Uniform in [0, 1): the schedule, the burst sizes and the targets (tests pass a fixed sequence). */
  random?: () => number;
  /** Called with each burst once its requests are mined, or with the reason it failed. */
  onBurst?: (outcome: { sent: SentChallenge[] } | { error: unknown }) => void;
}

/**
 * The network's benchmark (docs/verification.md, "Benchmark testing"): at random times (exponentially
 * distributed, mean `meanIntervalMs`), a burst of `burstMin`–`burstMax` job requests sent at once, about
 * holdings of its targets file. The nodes answer them as any job; what they answered, and how fast, is
 * their measured capacity.
 */
export class Challenger {
  readonly #options: ChallengerOptions;
  readonly #random: () => number;
  readonly #stopped = new AbortController();
  #running: Promise<void> | undefined;

  constructor(options: ChallengerOptions) {
    if (options.targets.length === 0) throw new Error("the challenger needs at least one target");
    this.#options = options;
    this.#random = options.random ?? Math.random;
  }

  /** Starts the schedule: the first burst comes after a random wait, like every other. */
  start(): void {
    this.#running ??= this.#loop();
  }

  /** Stops after the burst in progress, if any, is mined. */
  async stop(): Promise<void> {
    this.#stopped.abort();
    await this.#running;
  }

  /** The wait before the next burst: exponential with the configured mean (a memoryless schedule). */
  nextWaitMs(): number {
    return -Math.log(1 - this.#random()) * this.#options.meanIntervalMs;
  }

  /** Sends one burst and waits for its requests to be mined; resolves with what each opened. */
  async burst(): Promise<SentChallenge[]> {
    const { burstMin, burstMax, registry } = this.#options;
    const size = burstMin + Math.floor(this.#random() * (burstMax - burstMin + 1));
    const targets = Array.from({ length: size }, () => this.#pickTarget());
    // Sent one after the other without waiting (the signer numbers them), so they land in one or two blocks.
    const sent: { target: ChallengeTarget; tx: ContractTransactionResponse }[] = [];
    try {
      for (const target of targets) sent.push({ target, tx: await this.#request(registry, target) });
    } catch (error) {
      // A NonceManager counts a request before it is sent: one that failed to go out after its estimate (no ETH for
      // gas, an unreachable node) leaves a gap, and every later request would wait behind it in the pool for good.
      // The next burst numbers from the node's pending count again, which holds what this one did send.
      if (registry.runner instanceof NonceManager) registry.runner.reset();
      throw error;
    }
    const opened: SentChallenge[] = [];
    for (const { target, tx } of sent) {
      const receipt = await tx.wait();
      const log = receipt?.logs
        .map((entry) => registry.interface.parseLog(entry))
        .find((parsed) => parsed?.name === "VerificationRequested");
      if (log === undefined || log === null) throw new Error(`challenge ${tx.hash} opened no job`);
      opened.push({ target, jobId: log.args.jobId as bigint });
    }
    return opened;
  }

  async #loop(): Promise<void> {
    const signal = this.#stopped.signal;
    while (!signal.aborted) {
      const waited = await sleep(this.nextWaitMs(), signal);
      if (!waited) return;
      try {
        this.#options.onBurst?.({ sent: await this.burst() });
      } catch (error) {
        this.#options.onBurst?.({ error });
      }
    }
  }

  #pickTarget(): ChallengeTarget {
    const { targets } = this.#options;
    const target = targets[Math.floor(this.#random() * targets.length)];
    if (Math.floor(this.#random() * FRESH_OWNER_ODDS) !== 0) return target;
    const owner = target.chain === "evm" ? getAddress(hexlify(randomBytes(20))) : getAddressDecoder().decode(randomBytes(32));
    return { ...target, owner };
  }

  async #request(registry: VerificationRegistry, target: ChallengeTarget): Promise<ContractTransactionResponse> {
    if (target.chain === "evm") {
      const gasLimit = withMargin(await registry.requestEvmBalance.estimateGas(target.owner, target.asset));
      return registry.requestEvmBalance(target.owner, target.asset, { gasLimit });
    }
    const [owner, mint] = [solanaBytes32(target.owner), solanaBytes32(target.asset)];
    const gasLimit = withMargin(await registry.requestSvmBalance.estimateGas(owner, mint));
    return registry.requestSvmBalance(owner, mint, { gasLimit });
  }
}

/**
 * A burst is estimated before any of it is mined, and a finalization mined in between (freeing a
 * collateral slot) can make a request dearer than its estimate: the challenger, a service, keeps a margin.
 */
function withMargin(estimate: bigint): bigint {
  return (estimate * 13n) / 10n;
}

/** A Solana public key as the registry's bytes32 (its 32 bytes). */
function solanaBytes32(base58: string): string {
  return hexlify(Uint8Array.from(getAddressEncoder().encode(address(base58))));
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
async function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await delay(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
