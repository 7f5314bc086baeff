import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { createHash } from "node:crypto";

import { address, getAddressDecoder, getAddressEncoder, getBase64Decoder, type Address, type ReadonlyUint8Array } from "@solana/kit";
import type { LiteSVM } from "litesvm";

import {
  ACCOUNT_MINT_OFFSET,
  ACCOUNT_OWNER_OFFSET,
  isInitializedMint,
  isInitializedTokenAccount,
  TOKEN_PROGRAMS,
} from "../../chains/solana/token-layout.ts";
import { AvnError } from "@avn/protocol/errors";
import type { BlockLog } from "./block-log.ts";

const MAX_BODY_BYTES = 1 << 20;
const RENT_EPOCH_EXEMPT = "18446744073709551615"; // u64::MAX, as agave writes it for rent-exempt accounts
const API_VERSION = "2.2.0";

/** A JSON-RPC error answer of the endpoint (`rpcCode`, as agave answers it). */
class SolanaRpcAnswerError extends AvnError<"JSON_RPC_ERROR"> {
  constructor(
    readonly rpcCode: number,
    message: string,
  ) {
    super("JSON_RPC_ERROR", message);
    this.name = "SolanaRpcAnswerError";
  }
}

interface JsonRpcRequest {
  jsonrpc?: string;
  id?: string | number | null;
  method?: unknown;
  params?: unknown;
}

export interface SolanaRpcServer {
  url: string;
  /** Requests served, by method (tests count upstream calls with it). */
  calls: Map<string, number>;
  close(): Promise<void>;
}

/**
 * A Solana JSON-RPC endpoint over a LiteSVM ledger, serving the methods the Solana source adapter uses
 * (`getAccountInfo`, `getMultipleAccounts`, `getTokenAccountsByOwner`, plus `getSlot`, `getHealth`, `getVersion` for health
 * checks), and `getBlocks` and `getBlock` (the webhooks' follower) over the ledger's block log with agave's wire format and error messages. It is a test and local-stack harness: the adapter
 * itself speaks plain Solana JSON-RPC and works unchanged against a real node. LiteSVM keeps only the
 * latest state, so every commitment level reads the same state.
 */
export async function startSolanaRpcServer(ledger: SolanaLedger, port = 0): Promise<SolanaRpcServer> {
  const { svm } = ledger;
  const calls = new Map<string, number>();
  const scans = new TokenAccountScans(ledger);
  const server: Server = createServer((request, response) => void serve(svm, scans, ledger.blocks, calls, request, response));
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function serve(
  svm: LiteSVM,
  scans: TokenAccountScans,
  blocks: BlockLog | undefined,
  calls: Map<string, number>,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  let body = "";
  for await (const chunk of request) {
    body += chunk;
    if (body.length > MAX_BODY_BYTES) {
      response.writeHead(413).end();
      return;
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return reply(response, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
  }
  const answer = (one: JsonRpcRequest) => {
    const method = typeof one?.method === "string" ? one.method : "";
    calls.set(method, (calls.get(method) ?? 0) + 1);
    try {
      return {
        jsonrpc: "2.0",
        id: one.id ?? null,
        result: handle(svm, scans, blocks, method, Array.isArray(one.params) ? one.params : []),
      };
    } catch (error) {
      const { rpcCode: code, message } = error instanceof SolanaRpcAnswerError ? error : { rpcCode: -32603, message: "Internal error" };
      return { jsonrpc: "2.0", id: one?.id ?? null, error: { code, message } };
    }
  };
  reply(response, Array.isArray(parsed) ? parsed.map(answer) : answer(parsed as JsonRpcRequest));
}

function reply(response: ServerResponse, payload: unknown): void {
  const json = JSON.stringify(payload, (_key, value: unknown) => (typeof value === "bigint" ? `__bigint__${value}` : value)).replace(
    /"__bigint__(\d+)"/g,
    "$1", // u64 values as exact JSON integers, like agave
  );
  response.writeHead(200, { "content-type": "application/json" }).end(json);
}

function handle(svm: LiteSVM, scans: TokenAccountScans, blocks: BlockLog | undefined, method: string, params: unknown[]): unknown {
  const context = { apiVersion: API_VERSION, slot: svm.getClock().slot };
  switch (method) {
    case "getAccountInfo": {
      const account = svm.getAccount(parseAddress(params[0]));
      return { context, value: account.exists ? uiAccount(account) : null };
    }
    case "getMultipleAccounts": {
      // As agave: at most 100 keys; one entry per key, null for an account that does not exist.
      const keys = params[0];
      if (!Array.isArray(keys) || keys.length > 100) throw new SolanaRpcAnswerError(-32602, "Invalid params: expected at most 100 keys");
      return {
        context,
        value: keys.map((key) => {
          const account = svm.getAccount(parseAddress(key));
          return account.exists ? uiAccount(account) : null;
        }),
      };
    }
    case "getTokenAccountsByOwner":
      return { context, value: tokenAccountsByOwner(svm, scans, parseAddress(params[0]), params[1]) };
    case "getSlot":
      return context.slot;
    case "getBlocks": {
      const [start, end] = [parseSlot(params[0]), params[1] === undefined ? context.slot : parseSlot(params[1])];
      // As agave: at most 500,000 slots in one range.
      if (end - start > 500_000n) throw new SolanaRpcAnswerError(-32602, "Invalid params: slot range exceeds 500000");
      return blocks?.slots(start, end > context.slot ? context.slot : end) ?? [];
    }
    case "getBlock":
      return blockAnswer(blocks, parseSlot(params[0]), params[1], context.slot);
    case "getHealth":
      return "ok";
    case "getVersion":
      return { "solana-core": API_VERSION, "feature-set": 0 };
    default:
      throw new SolanaRpcAnswerError(-32601, "Method not found");
  }
}

function tokenAccountsByOwner(svm: LiteSVM, scans: TokenAccountScans, owner: Address, filter: unknown) {
  const { mint, programId } = (filter ?? {}) as { mint?: unknown; programId?: unknown };
  let program: string;
  if (mint !== undefined) {
    // As agave: the mint's own program decides which program's accounts are searched.
    const mintAccount = svm.getAccount(parseAddress(mint));
    if (!mintAccount.exists)
      throw new SolanaRpcAnswerError(-32602, "Error getting token program id and mint: Invalid param: could not find mint");
    if (!TOKEN_PROGRAMS.includes(mintAccount.programAddress)) {
      throw new SolanaRpcAnswerError(-32602, "Error getting token program id and mint: Invalid param: not a Token mint");
    }
    // As agave: the mint must unpack (an initialized mint, or a Token-2022 mint with extensions).
    if (!isInitializedMint(mintAccount.programAddress, mintAccount.data))
      throw new SolanaRpcAnswerError(-32602, "Error getting token program id and mint: Invalid param: mint could not be unpacked");
    program = mintAccount.programAddress;
  } else if (typeof programId === "string" && TOKEN_PROGRAMS.includes(programId)) {
    program = programId;
  } else {
    throw new SolanaRpcAnswerError(-32602, "Error getting token program id and mint: Invalid param: unrecognized Token program id");
  }
  const mintBytes = mint === undefined ? undefined : getAddressEncoder().encode(parseAddress(mint));
  return scans
    .ownedBy(address(program), owner)
    .filter(({ data }) => mintBytes === undefined || startsWith(data, ACCOUNT_MINT_OFFSET, mintBytes))
    .map((account) => ({ pubkey: account.address, account: uiAccount({ ...account, programAddress: address(program) }) }));
}

/** The ledger the endpoint serves, and a number that changes whenever its token accounts may have. */
export interface SolanaLedger {
  readonly svm: LiteSVM;
  /** The blocks of the transactions the ledger executed; without it `getBlocks` finds none. */
  readonly blocks?: BlockLog;
  readonly stateVersion: number;
}

type ProgramAccount = ReturnType<LiteSVM["getProgramAccounts"]>[number];

/**
 * A token program's initialized token accounts by owner, from one scan of the program
 * (`getProgramAccounts`, every account of it), kept while the ledger's `stateVersion` stands still. An
 * owner query is then a lookup, as an RPC node's owner index makes it: without this, each
 * `getTokenAccountsByOwner` scanned the whole program, and a verdict's per-mint reads (one per Solana leaf,
 * from the API and every node) scanned it again and again.
 */
class TokenAccountScans {
  readonly #ledger: SolanaLedger;
  readonly #byProgram = new Map<Address, { version: number; byOwner: Map<string, ProgramAccount[]> }>();

  constructor(ledger: SolanaLedger) {
    this.#ledger = ledger;
  }

  ownedBy(program: Address, owner: Address): ProgramAccount[] {
    const version = this.#ledger.stateVersion;
    let scan = this.#byProgram.get(program);
    if (scan === undefined || scan.version !== version) {
      scan = { version, byOwner: new Map() };
      for (const account of this.#ledger.svm.getProgramAccounts(program)) {
        if (!isInitializedTokenAccount(account.data)) continue;
        const key = ownerKey(account.data.subarray(ACCOUNT_OWNER_OFFSET, ACCOUNT_OWNER_OFFSET + 32));
        const owned = scan.byOwner.get(key);
        if (owned === undefined) scan.byOwner.set(key, [account]);
        else owned.push(account);
      }
      this.#byProgram.set(program, scan);
    }
    return scan.byOwner.get(ownerKey(getAddressEncoder().encode(owner))) ?? [];
  }
}

function ownerKey(bytes: ReadonlyUint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

function startsWith(data: ReadonlyUint8Array, offset: number, bytes: ReadonlyUint8Array): boolean {
  return Array.prototype.every.call(bytes, (byte: number, index: number) => data[offset + index] === byte);
}

function uiAccount(account: { data: ReadonlyUint8Array; lamports: bigint; programAddress: string; executable: boolean }) {
  return {
    data: [getBase64Decoder().decode(account.data), "base64"],
    executable: account.executable,
    lamports: account.lamports,
    owner: account.programAddress,
    rentEpoch: BigInt(RENT_EPOCH_EXEMPT),
    space: account.data.length,
  };
}

function parseSlot(value: unknown): bigint {
  if ((typeof value === "number" && Number.isSafeInteger(value) && value >= 0) || (typeof value === "bigint" && value >= 0n))
    return BigInt(value);
  throw new SolanaRpcAnswerError(-32602, `Invalid param: ${JSON.stringify(String(value))} is not a slot`);
}

/**
 * `getBlock` as agave answers it with `transactionDetails: "accounts"` (the account keys and the token balances
 * before and after each transaction, which is what a follower of holdings reads), or "none". A slot without a
 * block is skipped (-32007), one not reached yet is not available (-32004), as agave says.
 */
function blockAnswer(blocks: BlockLog | undefined, slot: bigint, config: unknown, currentSlot: bigint): unknown {
  const { transactionDetails = "full" } = (config ?? {}) as { transactionDetails?: unknown };
  if (transactionDetails !== "accounts" && transactionDetails !== "none")
    throw new SolanaRpcAnswerError(-32602, `Invalid params: the local endpoint serves transactionDetails "accounts" or "none"`);
  if (slot > currentSlot) throw new SolanaRpcAnswerError(-32004, `Block not available for slot ${slot}`);
  const block = blocks?.block(slot);
  if (block === undefined)
    throw new SolanaRpcAnswerError(-32007, `Slot ${slot} was skipped, or missing due to ledger jump to recent snapshot`);
  return {
    blockHeight: block.slot,
    blockTime: block.blockTime,
    blockhash: slotHash(block.slot),
    parentSlot: block.parentSlot,
    previousBlockhash: slotHash(block.parentSlot),
    ...(transactionDetails === "none"
      ? {}
      : {
          transactions: block.transactions.map((transaction) => ({
            meta: {
              err: transaction.failed ? { InstructionError: [0, "Custom"] } : null,
              status: transaction.failed ? { Err: { InstructionError: [0, "Custom"] } } : { Ok: null },
              preTokenBalances: transaction.preTokenBalances,
              postTokenBalances: transaction.postTokenBalances,
            },
            transaction: {
              accountKeys: transaction.accountKeys.map((pubkey, index) => ({
                pubkey,
                signer: index === 0,
                source: "transaction",
                writable: true,
              })),
              signatures: [transaction.signature],
            },
            version: 0,
          })),
        }),
  };
}

/** A stand-in block hash: base58 of 32 bytes derived from the slot (LiteSVM keeps no block hashes per slot). */
function slotHash(slot: bigint): string {
  return getAddressDecoder().decode(createHash("sha256").update(`slot:${slot}`).digest());
}

function parseAddress(value: unknown): Address {
  try {
    return address(String(value));
  } catch {
    throw new SolanaRpcAnswerError(-32602, `Invalid param: ${JSON.stringify(value)} is not a valid pubkey`);
  }
}
