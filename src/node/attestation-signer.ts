import { address } from "@solana/kit";
import type { Wallet } from "ethers";

import { AssetNotFoundError } from "../chains/rpc/errors.ts";
import { attestationMessageToJson, signAttestation } from "../common/attestation.ts";
import { AttestedChain, MAX_ATTESTATION_LICENSES, type AttestationDomain, type BalanceAttestation } from "@avn/protocol/attestation";
import { queryResultHash } from "../common/query-result.ts";
import { encodeSubject } from "../common/attestation-subject.ts";
import type { HubMessage } from "../common/hub-protocol.ts";
import type { PinnedReaders } from "../chains/pinned-readers.ts";

type AttestRequest = Extract<HubMessage, { type: "attest" }>;
export type AttestReply =
  | { type: "attestation"; id: string; message: Record<keyof BalanceAttestation, string>; licenseIds: string[]; signature: string }
  | { type: "refusal"; id: string; reason: string };

export interface AttestationSignerOptions {
  wallet: Pick<Wallet, "signTypedData">;
  domain: AttestationDomain;
  pinned: PinnedReaders;
  /** The node's own Ethereum head (its source RPCs), to refuse positions too far back. */
  evmHead: () => Promise<bigint>;
  /** The licenses delegated to this node that it signs for. */
  licenses: () => readonly bigint[];
  maxBlockLag: number;
  /**
   * The timestamp of the node's own latest L2 block (its L2 provider; cached about a second, concurrent
   * reads coalesced): the clock the hub's issue time is checked against, since the hub pins the L2 head's.
   */
  l2HeadTime: () => Promise<bigint>;
  /** The most seconds the issue time may be off `l2HeadTime()`, either way (the two views of the L2 head). */
  maxClockSkewSeconds: number;
}

/**
 * Answers the hub's attestation requests. The hub names the question (chain, owner, asset) and pins the
 * position and issue time; the node reads the balance ITSELF from its own source RPCs at that position,
 * through the same readers as its votes, builds the struct from what it read, and signs it. It never
 * signs a value it was handed, and refuses a position further back than `maxBlockLag` blocks or an issue
 * time further than `maxClockSkewSeconds` from its own view of the L2 head's time (either would let a hub
 * pass an old balance off as fresh; the hub pins the issue time to the L2 head's timestamp, chain time).
 */
export class AttestationSigner {
  private readonly options: AttestationSignerOptions;

  constructor(options: AttestationSignerOptions) {
    this.options = options;
  }

  async answer(request: AttestRequest): Promise<AttestReply> {
    const refuse = (reason: string): AttestReply => ({ type: "refusal", id: request.id, reason });
    const licenses = this.options.licenses();
    if (licenses.length === 0) return refuse("no license is delegated to this node");
    const chain = request.chain;
    if (chain !== AttestedChain.ethereum && chain !== AttestedChain.solana) return refuse("unknown chain");
    if (!validAddress(chain, request.owner) || !validAddress(chain, request.asset)) return refuse("malformed address");
    if (!/^\d{1,20}$/.test(request.sourceBlock) || !/^\d{1,20}$/.test(request.issuedAt)) return refuse("malformed position or issue time");
    const sourceBlock = BigInt(request.sourceBlock);
    const issuedAt = BigInt(request.issuedAt);
    let headTime: bigint;
    try {
      headTime = await this.options.l2HeadTime();
    } catch (error) {
      return refuse(`the L2 head could not be read (${(error as Error)?.name ?? "error"})`);
    }
    const skew = issuedAt - headTime;
    if (skew > BigInt(this.options.maxClockSkewSeconds) || -skew > BigInt(this.options.maxClockSkewSeconds))
      return refuse(`issue time ${request.issuedAt} is ${skew} s off this node's L2 head (${headTime})`);
    let read: { balance: bigint; queryResult: string };
    try {
      if (chain === AttestedChain.ethereum) {
        const head = await this.options.evmHead();
        if (sourceBlock + BigInt(this.options.maxBlockLag) < head)
          return refuse(`block ${sourceBlock} is more than ${this.options.maxBlockLag} blocks below the head`);
        read = await this.options.pinned.evmAt(sourceBlock).balanceOf(request.asset, request.owner);
      } else {
        const solana = await this.options.pinned.solanaFrom(sourceBlock).balanceOf(request.owner, request.asset);
        if (solana.slot < sourceBlock) return refuse(`the Solana RPC answered from slot ${solana.slot}, below ${sourceBlock}`);
        read = solana;
      }
    } catch (error) {
      return refuse(error instanceof AssetNotFoundError ? "not found" : `source read failed (${(error as Error)?.name ?? "error"})`);
    }
    const attestation: BalanceAttestation = {
      chain,
      ...encodeSubject({ chain, owner: request.owner, asset: request.asset }),
      balance: read.balance,
      queryResultHash: queryResultHash(read.queryResult).toLowerCase(),
      sourceBlock,
      issuedAt,
    };
    // One canonical order (ascending), and no more than one attestation may name: the signature covers the
    // list exactly as it is sent, so nobody can trim it later.
    const licenseIds = [...new Set(licenses)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, MAX_ATTESTATION_LICENSES);
    const signature = await signAttestation(this.options.wallet, this.options.domain, attestation, licenseIds);
    return {
      type: "attestation",
      id: request.id,
      message: attestationMessageToJson(attestation),
      licenseIds: licenseIds.map(String),
      signature,
    };
  }
}

function validAddress(chain: number, value: string): boolean {
  if (chain === AttestedChain.ethereum) return /^0x[0-9a-fA-F]{40}$/.test(value);
  try {
    address(value);
    return true;
  } catch {
    return false;
  }
}
