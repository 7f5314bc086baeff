import type { AttestationJson, ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import type { Hex } from "viem";

import { AvnApiError, InvalidArgumentError } from "./errors.ts";

import { postJson, type HttpOptions } from "./http.ts";
import { Subscriptions } from "./subscriptions.ts";

import type {
  ApiEnvelope,
  BatchEntryJson,
  BalanceProofJson,
  ConditionData,
  ConditionLeafJson,
  ConditionRequestBody,
  EvmBalanceData,
  EvmBatchData,
  SvmBalanceData,
  SvmBatchData,
} from "./wire.ts";

export interface AvnClientOptions {
  /** The API's origin, with any path prefix: `https://api.example`, `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** Sent as `Authorization: <apiKey>`. */
  apiKey: string;
  /**
   * Retries after the first attempt, for 429 with `Retry-After`, 5xx (but 501) and network errors: an
   * integer, 0 or more (an `InvalidArgumentError` otherwise). Default 2.
   */
  retries?: number;
  /** Default: `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch;
  /** Per attempt, body included. Default 30,000 ms: an attested answer takes up to the hub's deadline (3 s by default). */
  timeoutMs?: number;
  /** The longest `Retry-After` (seconds) the client waits out; a longer one is thrown. Default 10. */
  maxRetryAfter?: number;
}

/** Per call. */
export interface CallOptions {
  /** Aborts the call, its retries and their waits; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface EvmBalanceQuery {
  userAddress: string;
  contractAddress: string;
  /** ERC-1155 token id; without it, ERC-20 / ERC-721 `balanceOf(owner)`. Not with `attest` (a 400). */
  tokenId?: bigint | string;
  /**
   * true: also count what the wallets that delegated to `userAddress` through delegate.xyz v2 hold (empty rights
   * only; `docs/conditions.md`, "Delegations"); the result's `wallets` lists those that lent something. Not with
   * `attest` or `proof` (a 400): a signed answer counting delegations is a verdict, `"delegations": true` on a leaf.
   */
  includeDelegations?: boolean;
}

export interface SvmBalanceQuery {
  ownerAddress: string;
  tokenMintAddress: string;
}

/** `StorageProofVerifier.verifyBalance(contractAddress, userAddress, balancesSlot, maxAge, encoded)`'s inputs. */
export interface BalanceProof {
  /** The L1 block the proof is at. */
  blockNumber: bigint;
  blockHash: Hex;
  /** With `blockNumber` asked: the block the L2 knows, whose EIP-2935 history contract proves `blockHash`. */
  anchorBlockNumber?: bigint;
  balancesSlot: bigint;
  /** True for an inclusion proof of the balance, false for an exclusion proof (a balance of 0). */
  included: boolean;
  encoded: Hex;
}

export interface BalanceResult<Data> {
  /** The raw on-chain balance, base units, exact. */
  balance: bigint;
  /** The raw query result (`QueryResult`). */
  queryResult: string;
  /** With `attest: true`: the quorum's signed `BalanceAttestation`, for `verifyAttestation`, `recordAttestation` or a contract. */
  attestation?: AttestationJson;
  /** The whole answer, integers exact. */
  response: ApiEnvelope<Data>;
}

export interface EvmBalanceResult extends BalanceResult<EvmBalanceData> {
  /** With `includeDelegations`: the wallets that delegated to the owner and lent something, checksummed. */
  wallets?: string[];
  /** With `proof: true`: the storage proof (an exclusion proof for a balance of 0). */
  proof?: BalanceProof;
}

export type SvmBalanceResult = BalanceResult<SvmBalanceData>;

/** One item of a batch, in the order asked: its balance, or why it has none. */
export type BatchEntry =
  | {
      ok: true;
      status: 200;
      message: string;
      balance: bigint;
      queryResult: string;
      /** With `includeDelegations` (an Ethereum item): the wallets that delegated to the owner and lent something. */
      wallets?: string[];
    }
  | { ok: false; status: number; message: string };

export interface EvmBatchResult {
  /** The Ethereum block every item was read at. */
  blockNumber: bigint;
  results: BatchEntry[];
  response: ApiEnvelope<EvmBatchData>;
}

export interface SvmBatchResult {
  /** The finalized Solana slot every item was read at or after. */
  slot: bigint;
  results: BatchEntry[];
  response: ApiEnvelope<SvmBatchData>;
}

export interface ConditionLeafResult {
  chain: "ethereum" | "solana";
  contractAddress?: string;
  tokenMintAddress?: string;
  tokenId?: string;
  min: string;
  max?: string;
  balance: bigint;
  queryResult: string;
  holds: boolean;
}

export interface ConditionResult {
  verdict: boolean;
  /** What a gated contract pins (`conditionHash(condition)` computes it locally). */
  conditionHash: Hex;
  ownersHash: Hex;
  /** Where the leaves were read: only the chains the condition reads. */
  sourceBlocks: { ethereum?: bigint; solana?: bigint };
  /** Each leaf as read, in order of appearance; absent with `reveal: false`. */
  leaves?: ConditionLeafResult[];
  /** With `attest: true`: the quorum's signed `ConditionAttestation`. */
  attestation?: ConditionAttestationJson;
  response: ApiEnvelope<ConditionData>;
}

/**
 * The API's client: one method per route, answers parsed with exact integers, retries where waiting helps
 * (http.ts). What it throws is an `AvnClientError`: the constructor an `InvalidArgumentError`, a failed
 * call an `AvnApiError` (an `UnsupportedRuntimeError` on a runtime that cannot parse exactly); a call
 * aborted by its `signal` rejects with the signal's reason.
 */
export class AvnClient {
  readonly #http: HttpOptions;
  /** Webhooks: watch holdings and receive their changes (`verifyWebhook` checks what arrives). */
  readonly subscriptions: Subscriptions;

  constructor(options: AvnClientOptions) {
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== "function") throw new InvalidArgumentError("options.fetch", "No fetch in this runtime: pass options.fetch");
    const retries = options.retries ?? 2;
    if (!Number.isInteger(retries) || retries < 0)
      throw new InvalidArgumentError("options.retries", "options.retries must be a non-negative integer");
    this.#http = {
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      retries,
      // Called unbound: a browser's fetch throws "Illegal invocation" when called as another object's method.
      fetch: (input, init) => fetchImpl(input, init),
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetryAfter: options.maxRetryAfter ?? 10,
    };
    this.subscriptions = new Subscriptions(this.#http);
  }

  /**
   * `POST /api/ccq-evm`: an ERC-20 / ERC-721 (or, with `tokenId`, ERC-1155) balance on Ethereum. With `proof: true`,
   * `blockNumber` names the L1 block to prove at (one of the 8,191 before the one the L2 knows).
   */
  async evmBalance(
    query: EvmBalanceQuery,
    options: { attest?: boolean; proof?: boolean; blockNumber?: bigint } & CallOptions = {},
  ): Promise<EvmBalanceResult> {
    const body = evmBody(query);
    if (options.blockNumber !== undefined) body.block_number = options.blockNumber.toString();
    const answer = await this.#post("/api/ccq-evm", flags({ attest: options.attest, proof: options.proof }), body, options.signal);
    const response = envelopeOf<EvmBalanceData>(answer);
    const result: EvmBalanceResult = { ...balanceOf(response.data, "data"), response };
    if (response.data.wallets !== undefined) result.wallets = walletsAt(response.data.wallets, "data.wallets");
    if (options.proof === true) result.proof = proofOf(response.data.proof);
    return result;
  }

  /** `POST /api/ccq-svm`: an SPL Token / Token-2022 / NFT balance on Solana. */
  async svmBalance(query: SvmBalanceQuery, options: { attest?: boolean } & CallOptions = {}): Promise<SvmBalanceResult> {
    const body = await this.#post("/api/ccq-svm", flags({ attest: options.attest }), svmBody(query), options.signal);
    const response = envelopeOf<SvmBalanceData>(body);
    return { ...balanceOf(response.data, "data"), response };
  }

  /**
   * `POST /api/ccq-evm/batch`: up to 100 balances read at one block, each answered as the single route
   * would (an item's 400 or 404 is its entry, not an error). `partial: true` answers the items the key can
   * afford now and gives the rest 429 entries, instead of refusing the batch whole. The API refuses
   * `attest` on batches today (400); the flag is passed on as asked.
   */
  async evmBatch(
    items: readonly EvmBalanceQuery[],
    options: { attest?: boolean; partial?: boolean } & CallOptions = {},
  ): Promise<EvmBatchResult> {
    const body = await this.#post("/api/ccq-evm/batch", flags(options), items.map(evmBody), options.signal);
    const response = envelopeOf<EvmBatchData>(body);
    return { blockNumber: integerAt(response.data.blockNumber, "data.blockNumber"), results: batchEntries(response.data), response };
  }

  /** `POST /api/ccq-svm/batch`: up to 100 Solana balances, each read at the stated slot or later. */
  async svmBatch(
    items: readonly SvmBalanceQuery[],
    options: { attest?: boolean; partial?: boolean } & CallOptions = {},
  ): Promise<SvmBatchResult> {
    const body = await this.#post("/api/ccq-svm/batch", flags(options), items.map(svmBody), options.signal);
    const response = envelopeOf<SvmBatchData>(body);
    return { slot: integerAt(response.data.slot, "data.slot"), results: batchEntries(response.data), response };
  }

  /**
   * `POST /api/conditions`: a yes/no verdict over holdings on both chains (docs/conditions.md). The body is
   * sent as given: the API checks it and names the offending part in its 400.
   */
  async conditions(request: ConditionRequestBody, options: { attest?: boolean } & CallOptions = {}): Promise<ConditionResult> {
    const body = await this.#post("/api/conditions", flags({ attest: options.attest }), request, options.signal);
    const response = envelopeOf<ConditionData>(body);
    const { data } = response;
    if (typeof data.verdict !== "boolean") throw malformed("data.verdict is not a boolean");
    const sourceBlocks: ConditionResult["sourceBlocks"] = {};
    if (data.sourceBlocks?.ethereum !== undefined)
      sourceBlocks.ethereum = integerAt(data.sourceBlocks.ethereum, "data.sourceBlocks.ethereum");
    if (data.sourceBlocks?.solana !== undefined) sourceBlocks.solana = integerAt(data.sourceBlocks.solana, "data.sourceBlocks.solana");
    const result: ConditionResult = {
      verdict: data.verdict,
      conditionHash: data.conditionHash as Hex,
      ownersHash: data.ownersHash as Hex,
      sourceBlocks,
      response,
    };
    if (data.leaves !== undefined) result.leaves = data.leaves.map(leafOf);
    if (data.attestation !== undefined) result.attestation = data.attestation;
    return result;
  }

  #post(path: string, query: Record<string, string>, body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    return postJson(this.#http, path, query, body, signal);
  }
}

/*//////////////////////////////////////////////////////////////
                        REQUESTS AND ANSWERS
//////////////////////////////////////////////////////////////*/

/** The request's wire fields (src/api/server/chains.ts). */
function evmBody({ userAddress, contractAddress, tokenId, includeDelegations }: EvmBalanceQuery): Record<string, string | boolean> {
  const body: Record<string, string | boolean> = { user_address: userAddress, contract_address: contractAddress };
  if (tokenId !== undefined) body.token_id = tokenId.toString();
  if (includeDelegations === true) body.include_delegations = true;
  return body;
}

/** `data.wallets` as the API writes it: addresses, each a string. */
function walletsAt(value: unknown, path: string): string[] {
  if (!Array.isArray(value) || !value.every((wallet) => typeof wallet === "string")) throw malformed(`${path} is not a list of addresses`);
  return value;
}

function svmBody({ ownerAddress, tokenMintAddress }: SvmBalanceQuery): Record<string, string> {
  return { owner_address: ownerAddress, token_mint_address: tokenMintAddress };
}

/** The query string: only the flags set to true (`attest=false` is the default, so it is left out). */
function flags(options: { attest?: boolean; proof?: boolean; partial?: boolean }): Record<string, string> {
  const query: Record<string, string> = {};
  if (options.attest === true) query.attest = "true";
  if (options.proof === true) query.proof = "true";
  if (options.partial === true) query.partial = "true";
  return query;
}

function envelopeOf<Data>(body: unknown): ApiEnvelope<Data> {
  if (typeof body !== "object" || body === null) throw malformed("the answer is not a JSON object");
  const data = (body as { data?: unknown }).data;
  if (typeof data !== "object" || data === null) throw malformed("the answer has no data object");
  return body as ApiEnvelope<Data>;
}

/** `data.asset`'s balance and QueryResult, and the attestation when there is one. */
function balanceOf(
  data: EvmBalanceData | SvmBalanceData,
  path: string,
): { balance: bigint; queryResult: string; attestation?: AttestationJson } {
  const asset = data.asset as EvmBalanceData["asset"] | undefined;
  if (typeof asset !== "object" || asset === null) throw malformed(`${path}.asset is missing`);
  if (typeof asset.QueryResult !== "string") throw malformed(`${path}.asset.QueryResult is not a string`);
  const result: { balance: bigint; queryResult: string; attestation?: AttestationJson } = {
    balance: integerAt(asset.balance, `${path}.asset.balance`),
    queryResult: asset.QueryResult,
  };
  if (data.attestation !== undefined) result.attestation = data.attestation;
  return result;
}

function proofOf(proof: BalanceProofJson | undefined): BalanceProof {
  if (typeof proof !== "object" || proof === null) throw malformed("data.proof is missing");
  if (typeof proof.balancesSlot !== "string" || !/^[0-9]+$/.test(proof.balancesSlot))
    throw malformed("data.proof.balancesSlot is not a decimal string");
  if (typeof proof.included !== "boolean") throw malformed("data.proof.included is not a boolean");
  const result: BalanceProof = {
    blockNumber: integerAt(proof.blockNumber, "data.proof.blockNumber"),
    blockHash: proof.blockHash as Hex,
    balancesSlot: BigInt(proof.balancesSlot),
    included: proof.included,
    encoded: proof.encoded as Hex,
  };
  if (proof.anchorBlockNumber !== undefined) result.anchorBlockNumber = integerAt(proof.anchorBlockNumber, "data.proof.anchorBlockNumber");
  return result;
}

function batchEntries(data: EvmBatchData | SvmBatchData): BatchEntry[] {
  if (!Array.isArray(data.results)) throw malformed("data.results is not an array");
  return (data.results as BatchEntryJson<EvmBalanceData | SvmBalanceData>[]).map((entry, index) => {
    const status = Number(integerAt(entry.status, `data.results[${index}].status`));
    if (status !== 200) return { ok: false, status, message: entry.message };
    if (entry.data === undefined) throw malformed(`data.results[${index}] has status 200 and no data`);
    const { balance, queryResult } = balanceOf(entry.data, `data.results[${index}].data`);
    const wallets = (entry.data as EvmBalanceData).wallets;
    if (wallets === undefined) return { ok: true, status: 200, message: entry.message, balance, queryResult };
    return {
      ok: true,
      status: 200,
      message: entry.message,
      balance,
      queryResult,
      wallets: walletsAt(wallets, `data.results[${index}].data.wallets`),
    };
  });
}

function leafOf(leaf: ConditionLeafJson, index: number): ConditionLeafResult {
  const result: ConditionLeafResult = {
    chain: leaf.chain,
    min: leaf.min,
    balance: integerAt(leaf.balance, `data.leaves[${index}].balance`),
    queryResult: leaf.QueryResult,
    holds: leaf.holds,
  };
  if (leaf.contract_address !== undefined) result.contractAddress = leaf.contract_address;
  if (leaf.token_mint_address !== undefined) result.tokenMintAddress = leaf.token_mint_address;
  if (leaf.token_id !== undefined) result.tokenId = leaf.token_id;
  if (leaf.max !== undefined) result.max = leaf.max;
  return result;
}

/** A JSON integer of the answer, exact (parseJsonExact gave a bigint beyond 2^53). */
function integerAt(value: unknown, path: string): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  throw malformed(`${path} is not an integer`);
}

/** A 2xx answer without the fields its route always writes: not an answer of this API version. */
function malformed(problem: string): AvnApiError {
  return new AvnApiError(200, `Unexpected answer from the API: ${problem}`);
}
