import { getAddress, isAddress, isHash, type Address, type Hash } from "viem";

import type { ChainKey, KnownContract } from "./abis";

/** What a search box entry names, before the chains are asked which of them has it. */
export type SearchQuery =
  | { kind: "block"; number: bigint }
  | { kind: "hash"; hash: Hash }
  | { kind: "address"; address: Address }
  | { kind: "job"; id: bigint }
  | { kind: "contract"; matches: KnownContract[] }
  | { kind: "unknown"; text: string };

/**
 * Reads a search entry: a block number (decimal, or `0x` hex), a 32-byte hash (a transaction's or a
 * block's), an address (any case: an explorer looks up, it does not check checksums), `job:<id>` (or
 * `job <id>`, `#<id>`), or the name of a known contract, `VerificationRegistry` or `l1:PrimaryToken`, in any
 * case, with an optional `.avn`/`.eth` suffix as an ENS-like label.
 */
export function parseSearch(input: string, known: readonly KnownContract[]): SearchQuery {
  const text = input.trim();
  if (/^\d+$/.test(text)) return { kind: "block", number: BigInt(text) };
  const job = /^(?:job\s*[:#]?\s*|#)(\d+)$/i.exec(text);
  if (job !== null) return { kind: "job", id: BigInt(job[1]) };
  if (isHash(text)) return { kind: "hash", hash: text.toLowerCase() as Hash };
  if (isAddress(text, { strict: false })) return { kind: "address", address: getAddress(text) };
  if (/^0x[0-9a-f]{1,16}$/i.test(text)) return { kind: "block", number: BigInt(text) };
  const label = /^(?:(l1|l2)[:.])?([a-z0-9_]+)(?:\.(?:avn|eth))?$/i.exec(text);
  if (label !== null) {
    const chain = label[1]?.toLowerCase() as ChainKey | undefined;
    const name = label[2].toLowerCase();
    const matches = known.filter((contract) => contract.name.toLowerCase() === name && (chain === undefined || contract.chain === chain));
    if (matches.length > 0) return { kind: "contract", matches };
  }
  return { kind: "unknown", text };
}
