import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import type { EvmBalanceReader } from "../../chains/evm/balance-reader.ts";

import type { SolanaBalanceReader } from "../../chains/solana/balance-reader.ts";

import { attestationToJson } from "../../common/attestation.ts";

import { balanceKind } from "@avn/protocol/attestation-kinds";

import { AttestedChain } from "@avn/protocol/attestation";
import { queryResultHash } from "../../common/query-result.ts";

import type { PinnedReaders } from "../../chains/pinned-readers.ts";

import type { AttestationHub } from "./hub.ts";

import type { AttestQuery } from "../../common/hub-protocol.ts";

import { QuorumNotReachedError, type Admission } from "./rounds.ts";

/** What the API needs for `?attest=true`: the hub, the heads to pin from, and its own pinned readers. */
import type { ExporterSettings } from "./exporter-check.ts";

export interface AttestationService {
  hub: AttestationHub;
  pinned: PinnedReaders;
  evm: Pick<EvmBalanceReader, "latestBlock">;
  solana: Pick<SolanaBalanceReader, "latestSlot">;
  /** The L2's `AttestationExporter` (`ATTESTATION_EXPORTER`), as read at start, for `?eas=true`; undefined: no exports (501). */
  exporter?: ExporterSettings;
}

export interface AttestedAnswer {
  balance: bigint;
  queryResult: string;
  attestation: AttestationJson;
}

/** The Ethereum block attested answers are pinned to: `evmConfirmations` below the head (a reorg that deep is not expected). */
export async function pinnedEvmBlock(service: Pick<AttestationService, "evm" | "hub">): Promise<bigint> {
  const head = await service.evm.latestBlock();
  const confirmations = BigInt(service.hub.evmConfirmations);
  return head > confirmations ? head - confirmations : 0n;
}

/**
 * An attested ERC-20 / ERC-721 balance at the block `evmConfirmations` below the head. The hub's admission
 * goes beside the reads that pin the question: a network short of the quorum is refused at once (the 503
 * rejects the `Promise.all` without waiting for the heads).
 */
export async function attestEvm(service: AttestationService, owner: string, asset: string): Promise<AttestedAnswer> {
  const [admission, sourceBlock, issuedAt] = await Promise.all([service.hub.admit("evm"), pinnedEvmBlock(service), service.hub.issuedAt()]);
  return attest(service, admission, { chain: AttestedChain.ethereum, owner, asset, sourceBlock, issuedAt }, () =>
    service.pinned.evmAt(sourceBlock).balanceOf(asset, owner),
  );
}

/** An attested SPL / Token-2022 balance, read at the latest finalized slot or later (admitted as `attestEvm`'s). */
export async function attestSvm(service: AttestationService, owner: string, mint: string): Promise<AttestedAnswer> {
  const [admission, sourceBlock, issuedAt] = await Promise.all([
    service.hub.admit("svm"),
    service.solana.latestSlot(),
    service.hub.issuedAt(),
  ]);
  return attest(service, admission, { chain: AttestedChain.solana, owner, asset: mint, sourceBlock, issuedAt }, () =>
    service.pinned.solanaFrom(sourceBlock).balanceOf(owner, mint, { minContextSlot: sourceBlock }),
  );
}

/**
 * An attested balance at a position already chosen (a webhook's change: the block or slot it was read at), for
 * an ERC-20 / ERC-721 holding on Ethereum or an SPL / Token-2022 one on Solana.
 */
export async function attestAt(
  service: AttestationService,
  chain: "ethereum" | "solana",
  owner: string,
  asset: string,
  sourceBlock: bigint,
): Promise<AttestedAnswer> {
  const [admission, issuedAt] = await Promise.all([service.hub.admit(chain === "ethereum" ? "evm" : "svm"), service.hub.issuedAt()]);
  if (chain === "ethereum")
    return attest(service, admission, { chain: AttestedChain.ethereum, owner, asset, sourceBlock, issuedAt }, () =>
      service.pinned.evmAt(sourceBlock).balanceOf(asset, owner),
    );
  return attest(service, admission, { chain: AttestedChain.solana, owner, asset, sourceBlock, issuedAt }, () =>
    service.pinned.solanaFrom(sourceBlock).balanceOf(owner, asset, { minContextSlot: sourceBlock }),
  );
}

/**
 * Fans the query out to the nodes admitted; the answer travels once. The balance is the signed struct's, and the QueryResult
 * bytes are those a signer read and sent with its signature (the hub checked that they hash to the signed
 * `queryResultHash`), so the body and its attestation never tell two stories and the API reads nothing
 * itself. It reads the same position only when it must:
 * - no signer's bytes fitted a frame: it reads them, and they must hash to the signed hash;
 * - a round without quorum: its own read tells a missing asset (`AssetNotFoundError`, the route's 404) from
 *   the 503. (A network short of the quorum was refused at its admission, with nothing read.)
 */
async function attest(
  service: AttestationService,
  admission: Admission,
  query: AttestQuery,
  read: () => Promise<{ balance: bigint; queryResult: string }>,
): Promise<AttestedAnswer> {
  const { attestation, signatures, evidence } = await quorumOrNotFound(service.hub.gather(query, admission), read);
  const queryResult = evidence ?? (await read()).queryResult;
  if (queryResultHash(queryResult).toLowerCase() !== attestation.queryResultHash) {
    throw new QuorumNotReachedError("The nodes' attested answer differs from the API's own read (the source moved); retry");
  }
  return {
    balance: attestation.balance,
    queryResult,
    attestation: attestationToJson(balanceKind, service.hub.domain, attestation, signatures),
  };
}

/**
 * What `gathering` resolves with; when no quorum formed, the API reads the source itself, so that a missing
 * asset is its `AssetNotFoundError` (the route's 404) rather than the round's 503.
 */
export async function quorumOrNotFound<T>(gathering: Promise<T>, read: () => Promise<unknown>): Promise<T> {
  try {
    return await gathering;
  } catch (error) {
    if (error instanceof QuorumNotReachedError) await read();
    throw error;
  }
}
