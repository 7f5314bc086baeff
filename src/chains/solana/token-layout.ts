import { TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { address, type Address } from "@solana/kit";

/**
 * The SPL Token / Token-2022 account layouts this project reads, in one place: the source adapter parses
 * them and the LiteSVM endpoint filters by them as agave does (they must agree, or the tests would check
 * the adapter against a different rule than the one a real RPC applies).
 */
export const TOKEN_2022_PROGRAM_ADDRESS: Address = address("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
export const TOKEN_PROGRAMS: readonly string[] = [TOKEN_PROGRAM_ADDRESS, TOKEN_2022_PROGRAM_ADDRESS];

/** A mint without extensions is exactly this long; byte 45 is its `is_initialized` flag. */
export const MINT_SIZE = 82;
export const MINT_IS_INITIALIZED_OFFSET = 45;

/** A token account: mint (32 bytes), owner (32), amount (u64 little-endian), …, state at byte 108. */
export const TOKEN_ACCOUNT_SIZE = 165;
export const ACCOUNT_MINT_OFFSET = 0;
export const ACCOUNT_OWNER_OFFSET = 32;
export const ACCOUNT_AMOUNT_OFFSET = 64;
export const ACCOUNT_STATE_OFFSET = 108;

/** Token-2022 accounts with extensions carry their account type right after the 165-byte base. */
export const ACCOUNT_TYPE_OFFSET = 165;
export const AccountType = { mint: 1, account: 2 } as const;

/**
 * Whether an account of `program` is an initialized mint: SPL Token exactly 82 bytes; Token-2022 82 bytes,
 * or longer with account type "mint". Anything else of those programs (a token account, a multisig) is
 * not a mint, whatever byte 45 holds.
 */
export function isInitializedMint(program: string, data: ArrayLike<number>): boolean {
  const shapeIsMint =
    data.length === MINT_SIZE ||
    (program === TOKEN_2022_PROGRAM_ADDRESS && data.length > ACCOUNT_TYPE_OFFSET && data[ACCOUNT_TYPE_OFFSET] === AccountType.mint);
  return TOKEN_PROGRAMS.includes(program) && shapeIsMint && data[MINT_IS_INITIALIZED_OFFSET] === 1;
}

/** agave's token-account filter: 165 bytes, or longer with account type "account"; and initialized. */
export function isInitializedTokenAccount(data: ArrayLike<number>): boolean {
  const shapeIsAccount =
    data.length === TOKEN_ACCOUNT_SIZE || (data.length > ACCOUNT_TYPE_OFFSET && data[ACCOUNT_TYPE_OFFSET] === AccountType.account);
  return shapeIsAccount && data[ACCOUNT_STATE_OFFSET] !== 0;
}
