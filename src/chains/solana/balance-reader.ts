import {
  address,
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__INVALID_PARAMS,
  createSolanaRpcFromTransport,
  getAddressEncoder,
  getBase64Encoder,
  type Address,
  type Rpc,
  type RpcTransport,
  type SolanaRpcApi,
} from "@solana/kit";

import { AssetNotFoundError, SourceError } from "../rpc/errors.ts";
import { DEFAULT_HEAD_TTL_MS, HeadCache } from "../rpc/head-cache.ts";
import { ACCOUNT_AMOUNT_OFFSET, ACCOUNT_MINT_OFFSET, ACCOUNT_OWNER_OFFSET, isInitializedMint, TOKEN_ACCOUNT_SIZE } from "./token-layout.ts";

interface TokenAccountsAnswer {
  context: { slot: bigint };
  value: ReadonlyArray<{ pubkey: Address; account: { data: readonly [string, string]; owner: Address } }>;
}

/** A Solana token balance as the API and the nodes report it. */
export interface SolanaBalance {
  /** Sum of the owner's token accounts for the mint, base units. */
  balance: bigint;
  /** Lower-case hex (no `0x`) of the accounts' raw data, concatenated in account-address byte order. */
  queryResult: string;
  /** The slot the accounts were read at (Solana cannot read past slots). */
  slot: bigint;
}

/**
 * Reads what an owner holds of a mint (SPL Token or Token-2022) at `finalized` commitment: the mint is
 * read first (no account, or not a token mint: not found), then the owner's token accounts for it, no
 * older than the mint read (`minContextSlot`). Identical queries in flight share one read.
 */
export class SolanaBalanceReader {
  readonly #rpc: Rpc<SolanaRpcApi>;
  readonly #inFlight = new Map<string, Promise<SolanaBalance>>();
  readonly #head: HeadCache;

  /**
   * `headTtlMs`: how long the latest slot is reused before it is asked again, by the clock `now`
   * (milliseconds: Date.now unless a test moves it).
   */
  constructor(transport: RpcTransport, options: { headTtlMs?: number; now?: () => number } = {}) {
    this.#rpc = createSolanaRpcFromTransport(transport);
    this.#head = new HeadCache(
      () => this.#rpc.getSlot({ commitment: "finalized" }).send(),
      options.headTtlMs ?? DEFAULT_HEAD_TTL_MS,
      options.now,
    );
  }

  /** Resolves when the upstream reports itself healthy (`getHealth`); rejects otherwise (the API's `/readyz`). */
  async checkHealth(): Promise<void> {
    await this.#rpc.getHealth().send();
  }

  /** The latest finalized slot, asked now (the node's start-up benchmark). */
  currentSlotUncached(): Promise<bigint> {
    return this.#rpc.getSlot({ commitment: "finalized" }).send();
  }

  /** The latest finalized slot, asked at most once per `headTtlMs`. */
  latestSlot(): Promise<bigint> {
    return this.#head.get();
  }

  /**
   * What `owner` holds of `mint`. With `minContextSlot`, both reads are at that slot or later (the RPC
   * refuses to answer from an older state, and a lagging upstream is failed over): the API's batch
   * endpoint pins all its items to one finalized slot this way. Reads with the same lower bound (or both
   * without one) in flight share one read; an unbounded read is not shared with a bounded one, since it
   * may come from an upstream behind the bound.
   */
  balanceOf(owner: string, mint: string, options: { minContextSlot?: bigint } = {}): Promise<SolanaBalance> {
    const { minContextSlot } = options;
    const key = minContextSlot === undefined ? `${owner}:${mint}` : `${owner}:${mint}@${minContextSlot}`;
    const existing = this.#inFlight.get(key);
    if (existing !== undefined) return existing;
    const promise = this.#read(address(owner), address(mint), minContextSlot).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, promise);
    return promise;
  }

  /**
   * What `owner` holds of each of `mints`, at `minContextSlot` or later, all read at once however many
   * mints (a condition's Solana leaves): the mints in one `getMultipleAccounts`, and the owner's accounts of
   * each mint in one `getTokenAccountsByOwner` filtered by that mint, so an owner's other tokens are never
   * downloaded. Each answer is what `balanceOf` gives for that mint (the same balance, QueryResult and
   * checks); a mint that is not there rejects the whole read with `AssetNotFoundError`, as a leaf read alone
   * would.
   */
  async balancesOf(
    owner: string,
    mints: readonly string[],
    options: { minContextSlot?: bigint } = {},
  ): Promise<Map<string, SolanaBalance>> {
    const { minContextSlot } = options;
    const ownerAddress = address(owner);
    const mintAddresses = [...new Set(mints)].map((mint) => address(mint));
    // Without a lower bound (a pinned transport adds one), the reads may come from different slots.
    const read = { encoding: "base64", commitment: "finalized", ...(minContextSlot === undefined ? {} : { minContextSlot }) } as const;
    const accountReads = mintAddresses.map((mint) => this.#rpc.getTokenAccountsByOwner(ownerAddress, { mint }, read).send());
    for (const pending of accountReads) pending.catch(() => undefined); // judged below, after the mints
    const mintInfos = await this.#rpc.getMultipleAccounts(mintAddresses, read).send();
    notBefore(mintInfos.context.slot, minContextSlot);
    // The mints decide first: a missing one is not found, whatever its accounts read said.
    const programs = mintAddresses.map((mint, index) => tokenProgramOf(mint, mintInfos.value[index]));
    const balances = new Map<string, SolanaBalance>();
    for (const [index, mint] of mintAddresses.entries()) {
      const accounts = await accountsOf(mint, accountReads[index], minContextSlot);
      balances.set(mint, this.#sum(ownerAddress, mint, programs[index], accounts));
    }
    return balances;
  }

  /**
   * With a lower bound, the mint and the owner's accounts are read at once (both at that slot or later);
   * without, the accounts are read after the mint, no older than its answer. Either way the mint's answer
   * decides first: a missing mint is not found, whatever the accounts read said of it.
   */
  async #read(owner: Address, mint: Address, minContextSlot: bigint | undefined): Promise<SolanaBalance> {
    const bound = minContextSlot === undefined ? {} : { minContextSlot };
    const readAccounts = (atLeast: bigint) =>
      this.#rpc.getTokenAccountsByOwner(owner, { mint }, { encoding: "base64", commitment: "finalized", minContextSlot: atLeast }).send();
    const early = minContextSlot === undefined ? undefined : readAccounts(minContextSlot);
    early?.catch(() => undefined); // judged below, after the mint
    const mintInfo = await this.#rpc.getAccountInfo(mint, { encoding: "base64", commitment: "finalized", ...bound }).send();
    notBefore(mintInfo.context.slot, minContextSlot);
    const program = tokenProgramOf(mint, mintInfo.value);
    const accounts = await accountsOf(mint, early ?? readAccounts(mintInfo.context.slot), minContextSlot);
    return this.#sum(owner, mint, program, accounts);
  }

  /** The owner's balance of `mint` from its token accounts of the mint's program, checked and summed. */
  #sum(owner: Address, mint: Address, program: Address, accounts: TokenAccountsAnswer): SolanaBalance {
    const encoder = getAddressEncoder();
    const [ownerBytes, mintBytes] = [encoder.encode(owner), encoder.encode(mint)];
    const held = accounts.value.map(({ pubkey, account }) => {
      const data = getBase64Encoder().encode(account.data[0]);
      // Trust, but check: the upstream's filter must have matched this owner and mint.
      if (
        account.owner !== program ||
        data.length < TOKEN_ACCOUNT_SIZE ||
        !sameBytes(data.subarray(ACCOUNT_MINT_OFFSET, ACCOUNT_MINT_OFFSET + 32), mintBytes) ||
        !sameBytes(data.subarray(ACCOUNT_OWNER_OFFSET, ACCOUNT_OWNER_OFFSET + 32), ownerBytes)
      ) {
        throw new SourceError(`the upstream returned token account ${pubkey}, which is not the owner's account for this mint`);
      }
      return { key: encoder.encode(pubkey), data };
    });
    held.sort((a, b) => compareBytes(a.key, b.key));
    let balance = 0n;
    for (const { data } of held) balance += new DataView(data.buffer, data.byteOffset + ACCOUNT_AMOUNT_OFFSET, 8).getBigUint64(0, true);
    return {
      balance,
      queryResult: held.map(({ data }) => Buffer.from(data).toString("hex")).join(""),
      slot: accounts.context.slot,
    };
  }
}

/** Trust, but check: an upstream that ignored minContextSlot must not pass off an older state. */
function notBefore(slot: bigint, minContextSlot: bigint | undefined): void {
  if (minContextSlot !== undefined && slot < minContextSlot)
    throw new SourceError(`the upstream answered from slot ${slot}, before the requested slot ${minContextSlot}`);
}

/** The token program of `mint`'s account, or `AssetNotFoundError` when there is none or it is not a mint. */
function tokenProgramOf(mint: Address, account: { owner: Address; data: readonly [string, string] } | null): Address {
  if (account === null) throw new AssetNotFoundError(`no mint account at ${mint}`);
  if (!isInitializedMint(account.owner, getBase64Encoder().encode(account.data[0])))
    throw new AssetNotFoundError(`${mint} is not a token mint`);
  return account.owner;
}

/** The owner's accounts of `mint` as `read` answers them, no older than `minContextSlot`. */
async function accountsOf(
  mint: Address,
  read: Promise<TokenAccountsAnswer>,
  minContextSlot: bigint | undefined,
): Promise<TokenAccountsAnswer> {
  let accounts: TokenAccountsAnswer;
  try {
    accounts = await read;
  } catch (error) {
    // The RPC refuses a mint it cannot unpack with "invalid params": what it says is that no token is there.
    if (isSolanaError(error, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS)) throw new AssetNotFoundError(`${mint} is not a token mint`);
    throw error;
  }
  notBefore(accounts.context.slot, minContextSlot);
  return accounts;
}

function sameBytes(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

function compareBytes(a: ArrayLike<number>, b: ArrayLike<number>): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
