import { Contract, type Provider } from "ethers";

import type { StackFile } from "../common/stack-file.ts";
import { STACK_ATTESTATION_EVM_CONFIRMATIONS } from "../devnet/stack-attestation.ts";

/**
 * How an answer is judged (docs/operations.md, "Chaos"): right (200 with the canonical balance), refused
 * (a status that says to come back: 429, 502, 503, 504, with a JSON message), wrong (a 200 with another
 * balance, or any 500, whose cause the client cannot act on), or unanswered (no HTTP answer at all: the
 * connection reset or refused, or no answer within the client's timeout).
 */
export type Verdict = "right" | "refused" | "wrong" | "unanswered";

export interface Outcome {
  stream: string;
  verdict: Verdict;
  status?: number;
  /** Milliseconds from the request to its answer (or failure). */
  ms: number;
  /** When the answer came (`performance.now()`). */
  at: number;
  /** What was wrong or refused: the status and the API's message. */
  detail?: string;
}

/** One query the load repeats, and how its answer is checked. */
export interface LoadStream {
  name: string;
  path: string;
  body: Record<string, unknown>;
  /**
   * The balances an answer to a request sent at `sentAt` (`performance.now()`) may carry: what the source
   * holds now, read after the answer, and what it held within the API's documented freshness before. An
   * attested Ethereum answer also names its `sourceBlock`: the balance at that block, if the block is that recent.
   */
  expected: (sentAt: number, sourceBlock?: number) => Promise<readonly bigint[]>;
  /** Whether a 200 must carry a quorum's signatures. */
  attested?: boolean;
}

const REFUSALS = new Set([429, 502, 503, 504]);
/** A request without an answer after this long is unanswered: far beyond every bar of issue 53. */
const REQUEST_TIMEOUT_MS = 10_000;
/** How many wrong and how many unanswered outcomes a tally keeps as examples (the first ones). */
const EXAMPLES = 20;

/** What a window of the load saw of one stream, or of several summed. */
export interface Tally {
  total: number;
  right: number;
  refused: number;
  wrong: number;
  unanswered: number;
  /** The slowest answer (or failure), in milliseconds; 0 without any. */
  slowestMs: number;
  /** The statuses the refusals carried, each once. */
  refusedStatuses: number[];
  /** The first `EXAMPLES` wrong and the first `EXAMPLES` unanswered outcomes, in the order they came. */
  examples: Outcome[];
}

function emptyTally(): Tally {
  return { total: 0, right: 0, refused: 0, wrong: 0, unanswered: 0, slowestMs: 0, refusedStatuses: [], examples: [] };
}

/** Adds `outcome` to `tally`. */
function count(tally: Tally, outcome: Outcome): void {
  tally.total += 1;
  tally[outcome.verdict] += 1;
  tally.slowestMs = Math.max(tally.slowestMs, outcome.ms);
  if (outcome.verdict === "refused" && outcome.status !== undefined && !tally.refusedStatuses.includes(outcome.status))
    tally.refusedStatuses.push(outcome.status);
  if (outcome.verdict !== "right" && outcome.verdict !== "refused" && tally[outcome.verdict] <= EXAMPLES) tally.examples.push(outcome);
}

/** Several tallies as one (the examples: the first ones of them all). */
export function sumTallies(tallies: readonly Tally[]): Tally {
  const sum = emptyTally();
  for (const tally of tallies) {
    for (const key of ["total", "right", "refused", "wrong", "unanswered"] as const) sum[key] += tally[key];
    sum.slowestMs = Math.max(sum.slowestMs, tally.slowestMs);
    sum.refusedStatuses = [...new Set([...sum.refusedStatuses, ...tally.refusedStatuses])];
  }
  const kept = { wrong: 0, unanswered: 0 };
  sum.examples = tallies
    .flatMap((tally) => tally.examples)
    .sort((a, b) => a.at - b.at)
    .filter((outcome) => outcome.verdict !== "right" && outcome.verdict !== "refused" && ++kept[outcome.verdict] <= EXAMPLES);
  return sum;
}

/**
 * The answers of the load from the moment `SteadyLoad.window()` opened it until `close()`, those `accept` takes,
 * tallied per stream as they come: counts, never the outcomes themselves (a soak runs for an hour).
 */
export class LoadWindow {
  readonly #accept: (outcome: Outcome) => boolean;
  readonly #streams = new Map<string, Tally>();
  readonly #detach: (window: LoadWindow) => void;

  constructor(accept: (outcome: Outcome) => boolean, detach: (window: LoadWindow) => void) {
    this.#accept = accept;
    this.#detach = detach;
  }

  /** Counts `outcome` if the window takes it (the load calls it with each outcome while the window is open). */
  add(outcome: Outcome): void {
    if (!this.#accept(outcome)) return;
    const tally = this.#streams.get(outcome.stream) ?? emptyTally();
    this.#streams.set(outcome.stream, tally);
    count(tally, outcome);
  }

  /** The streams' tallies summed, those `which` names (all by default). */
  tally(which: (stream: string) => boolean = () => true): Tally {
    return sumTallies([...this.#streams].filter(([stream]) => which(stream)).map(([, tally]) => tally));
  }

  /** Counts nothing more; what it counted stays readable. Returns itself. */
  close(): this {
    this.#detach(this);
    return this;
  }
}

/**
 * A steady client of the API: each stream sends its query, waits for the answer and judges it, then waits
 * `intervalMs` and sends the next; the streams run side by side. What it saw is counted in the windows opened on it
 * (`window()`). `exclusive()` holds every stream between two requests (a scenario that changes what is right, a reorg,
 * takes it so that no answer straddles it).
 */
export class SteadyLoad {
  readonly #api: { url: string; key: string };
  readonly #streams: readonly LoadStream[];
  readonly #intervalMs: number;
  readonly #windows = new Set<LoadWindow>();
  #running = false;
  #loops: Promise<void>[] = [];
  #gate: Promise<void> = Promise.resolve();
  #inFlight = 0;
  #drained: (() => void) | undefined;
  #listeners = new Set<(outcome: Outcome) => void>();

  constructor(api: { url: string; key: string }, streams: readonly LoadStream[], intervalMs: number) {
    this.#api = api;
    this.#streams = streams;
    this.#intervalMs = intervalMs;
  }

  start(): void {
    this.#running = true;
    this.#loops = this.#streams.map((stream) => this.#loop(stream));
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  /** Opens a window: the answers that come from now until its `close()`, those `accept` takes (all by default). */
  window(accept: (outcome: Outcome) => boolean = () => true): LoadWindow {
    const window = new LoadWindow(accept, (closed) => this.#windows.delete(closed));
    this.#windows.add(window);
    return window;
  }

  /** Resolves with the first outcome for which `predicate` holds from now on. */
  next(predicate: (outcome: Outcome) => boolean): Promise<Outcome> {
    return new Promise((resolve) => {
      const listener = (outcome: Outcome) => {
        if (!predicate(outcome)) return;
        this.#listeners.delete(listener);
        resolve(outcome);
      };
      this.#listeners.add(listener);
    });
  }

  /** Runs `action` with no request in flight and none sent until it is done. */
  async exclusive<T>(action: () => Promise<T>): Promise<T> {
    let open!: () => void;
    const previous = this.#gate;
    this.#gate = new Promise<void>((resolve) => (open = resolve));
    await previous;
    if (this.#inFlight > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
    try {
      return await action();
    } finally {
      open();
    }
  }

  async #loop(stream: LoadStream): Promise<void> {
    while (this.#running) {
      await this.#gate;
      this.#inFlight += 1;
      try {
        this.#record(await this.#ask(stream));
      } finally {
        this.#inFlight -= 1;
        if (this.#inFlight === 0) this.#drained?.();
      }
      if (this.#running) await new Promise((resolve) => setTimeout(resolve, this.#intervalMs));
    }
  }

  #record(outcome: Outcome): void {
    for (const window of this.#windows) window.add(outcome);
    for (const listener of [...this.#listeners]) listener(outcome);
  }

  async #ask(stream: LoadStream): Promise<Outcome> {
    const started = performance.now();
    const outcome = (verdict: Verdict, status?: number, detail?: string): Outcome => ({
      stream: stream.name,
      verdict,
      status,
      ms: Math.round(performance.now() - started),
      at: performance.now(),
      detail,
    });
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.#api.url}${stream.path}`, {
        method: "POST",
        headers: { authorization: this.#api.key, "content-type": "application/json" },
        body: JSON.stringify(stream.body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      const cause = (error as Error).cause;
      return outcome("unanswered", undefined, cause instanceof Error ? cause.message : (error as Error).message);
    }
    const message = messageOf(text);
    if (response.status !== 200) {
      const clear = REFUSALS.has(response.status) && message !== undefined;
      return outcome(clear ? "refused" : "wrong", response.status, `${response.status} ${message ?? text.slice(0, 120)}`);
    }
    const answered = balanceOf(text, stream.path.includes("ccq-evm"));
    const sourceBlock = /"sourceBlock":\s*"(\d+)"/.exec(text);
    const expected = await stream.expected(started, sourceBlock === null ? undefined : Number(sourceBlock[1]));
    if (answered === undefined || !expected.includes(answered))
      return outcome("wrong", 200, `balance ${answered}, the source says ${expected.join(" or ")}`);
    if (stream.attested === true && !/"signatures":\s*\[\s*\{/.test(text)) return outcome("wrong", 200, "no signatures");
    return outcome("right", 200);
  }
}

/** The API's `message`, if the body is its JSON envelope. */
function messageOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    return typeof body.message === "string" ? body.message : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The answer's balance, exactly: from its `QueryResult` for Ethereum (the 32-byte word), else from the JSON
 * text (a balance above 2^53 is a JSON number that `JSON.parse` would round).
 */
function balanceOf(text: string, evm: boolean): bigint | undefined {
  if (evm) {
    const word = /"QueryResult":\s*"(0x[0-9a-fA-F]{64})"/.exec(text);
    return word === null ? undefined : BigInt(word[1]);
  }
  const plain = /"asset":\s*\{"balance":\s*(\d+)/.exec(text);
  return plain === null ? undefined : BigInt(plain[1]);
}

/**
 * How far behind the chain's head an Ethereum answer may be (docs/api.md: the API reads the head at most
 * once a second, and sees a reorg at that look), with a margin for this client's own reads.
 */
export const EVM_FRESHNESS_MS = 1_250;

/**
 * The canonical balance of `owner` in the ERC-20 or ERC-721 at `asset`, read from the source after each
 * answer: an answer is right if it is the balance now, or one the source held (as this client read it)
 * within `EVM_FRESHNESS_MS` before the request was sent. An attested answer is read at a block pinned
 * `pinBlocks` below the head the hub saw (`ATTESTATION_EVM_CONFIRMATIONS`) and names it (`sourceBlock`): it is
 * also right if it is the balance at that block, when that block is no older than the head this client saw
 * `EVM_FRESHNESS_MS` before the request, less the pin. This client's reads need not have seen that balance: a
 * holding that moves twice within a second held the one between for a block or two only.
 */
export function evmBalanceNow(source: Provider, asset: string, owner: string, pinBlocks: number): LoadStream["expected"] {
  const token = new Contract(asset, ["function balanceOf(address) view returns (uint256)"], source);
  const balanceAt = (blockTag: number | "latest") => token.getFunction("balanceOf")(owner, { blockTag }) as Promise<bigint>;
  const seen: Array<{ at: number; balance: bigint; head: number }> = [];
  return async (sentAt, sourceBlock) => {
    const [balance, head] = await Promise.all([balanceAt("latest"), source.getBlockNumber()]);
    const now = performance.now();
    seen.push({ at: now, balance, head });
    while (seen.length > 1 && seen[1].at < now - 60_000) seen.shift();
    const since = sentAt - EVM_FRESHNESS_MS;
    const accepted = [balance, ...seen.filter((entry) => entry.at >= since).map((entry) => entry.balance)];
    if (sourceBlock !== undefined) {
      // The head at `since` was at least the last one read before it (or, with none, the oldest read).
      const before = seen.filter((entry) => entry.at <= since).at(-1) ?? seen[0];
      if (sourceBlock >= before.head - pinBlocks && sourceBlock <= head) accepted.push(await balanceAt(sourceBlock));
    }
    return accepted;
  };
}

/**
 * The queries of the load on a stack's first demo holdings, each checked against what its source holds: the
 * Ethereum one (read from `source`, the L1) and the Solana one, each plain and attested.
 */
export function demoStreams(stack: StackFile, source: Provider, attestedPinBlocks = STACK_ATTESTATION_EVM_CONFIRMATIONS): LoadStream[] {
  const evm = stack.demo!.evm[0];
  const svm = stack.demo!.svm[0];
  const evmBody = { user_address: evm.user_address, contract_address: evm.contract_address };
  const svmBody = { owner_address: svm.owner_address, token_mint_address: svm.token_mint_address };
  const evmNow = evmBalanceNow(source, evm.contract_address, evm.user_address, attestedPinBlocks);
  const svmBalance = async () => [BigInt(svm.balance)];
  return [
    { name: "evm plain", path: "/api/ccq-evm", body: evmBody, expected: evmNow },
    { name: "evm attested", path: "/api/ccq-evm?attest=true", body: evmBody, expected: evmNow, attested: true },
    { name: "svm plain", path: "/api/ccq-svm", body: svmBody, expected: svmBalance },
    { name: "svm attested", path: "/api/ccq-svm?attest=true", body: svmBody, expected: svmBalance, attested: true },
  ];
}
