import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from "@solana/kit";
import { getCreateAccountInstruction } from "@solana-program/system";
import {
  AuthorityType,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeAccount3Instruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getSetAuthorityInstruction,
  getTokenSize,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { FailedTransactionMetadata, LiteSVM } from "litesvm";

import { TOKEN_2022_PROGRAM_ADDRESS } from "../../chains/solana/token-layout.ts";
import { BlockLog } from "./block-log.ts";

/** The two token programs a mint can belong to. */
export type TokenProgramName = "spl" | "token-2022";
const PROGRAM_ADDRESS: Record<TokenProgramName, Address> = { spl: TOKEN_PROGRAM_ADDRESS, "token-2022": TOKEN_2022_PROGRAM_ADDRESS };

interface MintInfo {
  program: Address;
  decimals: number;
}

/**
 * A Solana ledger in process (LiteSVM, which ships the real SPL Token and Token-2022 programs) with the
 * token operations the tests and the local stack seed it with. Every change is a real transaction
 * executed by the programs. Token-2022 instructions are built with `@solana-program/token`'s builders
 * pointed at the Token-2022 program: the base instructions are the same bytes, and the dedicated
 * Token-2022 client package does not yet support the kit version used here.
 */
export class SolanaTokenLedger {
  readonly svm = new LiteSVM();
  /** The blocks of the transactions this ledger executed (`getBlock`, `getBlocks`). */
  readonly blocks = new BlockLog();
  readonly #mints = new Map<Address, MintInfo>();
  #stateVersion = 0;
  #payer!: KeyPairSigner;

  static async create(): Promise<SolanaTokenLedger> {
    const ledger = new SolanaTokenLedger();
    ledger.#payer = await ledger.newWallet();
    return ledger;
  }

  /**
   * A number that changes with every change this ledger makes to its accounts (the Solana endpoint keeps its
   * scans of a token program while it stands still). Code that changes `svm` directly must not rely on it.
   */
  get stateVersion(): number {
    return this.#stateVersion;
  }

  /** Writes `account` as it is, as no program would (tests forge accounts with it). */
  setAccount(account: Parameters<LiteSVM["setAccount"]>[0]): void {
    this.svm.setAccount(account);
    this.#stateVersion += 1;
  }

  /** A new funded wallet (1,000 SOL of fees). */
  async newWallet(): Promise<KeyPairSigner> {
    const wallet = await generateKeyPairSigner();
    this.svm.airdrop(wallet.address, lamports(1_000_000_000_000n));
    this.#stateVersion += 1;
    return wallet;
  }

  /** A new mint of `program` with `decimals`, the ledger's payer as mint authority. */
  async createMint(program: TokenProgramName, decimals: number): Promise<Address> {
    const mint = await generateKeyPairSigner();
    const programAddress = PROGRAM_ADDRESS[program];
    await this.#send([
      this.#createAccount(mint, getMintSize(), programAddress),
      getInitializeMint2Instruction(
        { mint: mint.address, decimals, mintAuthority: this.#payer.address, freezeAuthority: null },
        { programAddress },
      ),
    ]);
    this.#mints.set(mint.address, { program: programAddress, decimals });
    return mint.address;
  }

  /** The owner's associated token account for `mint`, created if missing. */
  async associatedAccount(owner: Address, mint: Address): Promise<Address> {
    const { program } = this.#mint(mint);
    const [account] = await findAssociatedTokenPda({ owner, mint, tokenProgram: program });
    await this.#send([
      getCreateAssociatedTokenIdempotentInstruction({ payer: this.#payer, ata: account, owner, mint, tokenProgram: program }),
    ]);
    return account;
  }

  /** A second, plain token account of `owner` for `mint` (an owner may hold several). */
  async extraAccount(owner: Address, mint: Address): Promise<Address> {
    const { program } = this.#mint(mint);
    const account = await generateKeyPairSigner();
    await this.#send([
      this.#createAccount(account, getTokenSize(), program),
      getInitializeAccount3Instruction({ account: account.address, mint, owner }, { programAddress: program }),
    ]);
    return account.address;
  }

  async mintTo(mint: Address, account: Address, amount: bigint): Promise<void> {
    const { program } = this.#mint(mint);
    await this.#send([getMintToInstruction({ mint, token: account, mintAuthority: this.#payer, amount }, { programAddress: program })]);
  }

  /** Moves `amount` from `source` to `destination`, signed by the source's owner. */
  async transfer(owner: KeyPairSigner, mint: Address, source: Address, destination: Address, amount: bigint): Promise<void> {
    const { program, decimals } = this.#mint(mint);
    // The owner signs through the instruction's account meta; the ledger's payer pays the fee.
    await this.#send([
      getTransferCheckedInstruction({ source, mint, destination, authority: owner, amount, decimals }, { programAddress: program }),
    ]);
  }

  /** An NFT: a decimals-0 mint, one token minted to `owner`, minting then disabled for good (supply 1). */
  async createNft(owner: Address): Promise<{ mint: Address; account: Address }> {
    const mint = await this.createMint("spl", 0);
    const account = await this.associatedAccount(owner, mint);
    await this.mintTo(mint, account, 1n);
    await this.#send([
      getSetAuthorityInstruction({ owned: mint, owner: this.#payer, authorityType: AuthorityType.MintTokens, newAuthority: null }),
    ]);
    return { mint, account };
  }

  /** A rent-exempt account of `space` bytes owned by `program`, paid by the ledger's payer. */
  #createAccount(account: KeyPairSigner, space: number, program: Address): Instruction {
    return getCreateAccountInstruction({
      payer: this.#payer,
      newAccount: account,
      lamports: this.svm.minimumBalanceForRentExemption(BigInt(space)),
      space,
      programAddress: program,
    });
  }

  #mint(mint: Address): MintInfo {
    const info = this.#mints.get(mint);
    if (info === undefined) throw new Error(`${mint} is not a mint of this ledger`);
    return info;
  }

  async #send(instructions: Instruction[]): Promise<void> {
    const transaction = await pipe(
      createTransactionMessage({ version: 0 }),
      (message) => setTransactionMessageFeePayerSigner(this.#payer, message),
      (message) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(message),
      (message) => appendTransactionMessageInstructions(instructions, message),
      (message) => signTransactionMessageWithSigners(message),
    );
    // The transaction's accounts in message order (fee payer first), for its block's token balances.
    const keys = [
      ...new Set([this.#payer.address, ...instructions.flatMap((instruction) => (instruction.accounts ?? []).map((meta) => meta.address))]),
    ];
    const decimalsOf = (mint: string) => this.#mints.get(mint as Address)?.decimals;
    const preTokenBalances = this.blocks.tokenBalances(this.svm, keys, decimalsOf);
    // A slot of its own for each transaction, entered before it runs (a slot that moves like a chain's): the
    // latest slot the endpoint reports (getSlot) is then always one whose block is complete, as a validator's
    // finalized slot is, and a follower that has passed a slot never sees a block appear in it later.
    this.svm.warpToSlot(this.svm.getClock().slot + 1n);
    const slot = this.svm.getClock().slot;
    const result = this.svm.sendTransaction(transaction);
    this.#stateVersion += 1; // failed or not: a failed transaction still charges its fee
    this.blocks.record(slot, Math.floor(Date.now() / 1000), {
      signature: getSignatureFromTransaction(transaction),
      accountKeys: keys,
      preTokenBalances,
      postTokenBalances: this.blocks.tokenBalances(this.svm, keys, decimalsOf),
      failed: result instanceof FailedTransactionMetadata,
    });
    if (result instanceof FailedTransactionMetadata) {
      throw new Error(`Solana transaction failed: ${result.toString()}\n${result.meta().logs().join("\n")}`);
    }
    // A fresh blockhash per transaction: identical transactions would otherwise be refused as already processed.
    this.svm.expireBlockhash();
  }
}
