import type { ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import { createSignableMessage, generateKeyPairSigner, getBase58Decoder } from "@solana/kit";

import { getAddress, hexlify, randomBytes } from "ethers";

import type { AttestationVerifier } from "../../typechain-types/index.ts";

import { attestationFromJson } from "../common/attestation.ts";

import { conditionKind } from "@avn/protocol/attestation-kinds";

import { linkMessage } from "@avn/protocol/conditions";
import type { EvmDemoHoldings, SolanaDemoHoldings } from "../devnet/demo-holdings.ts";

import { summarize, type TimingSummary } from "./bridge-timing.ts";

/** The condition sizes `npm run bench:attest` times (docs/conditions.md). */
export const BENCH_CONDITION_LEAVES = [1, 4, 16] as const;

/**
 * A fresh condition request of `leaves` leaves over the demo tokens, for a fresh player: so that no cache
 * anywhere answers it. One leaf: an ERC-20 on Ethereum. Four: two Ethereum leaves (the ERC-20 and an
 * ERC-1155 item) and two Solana leaves, linked. Sixteen: eight of each, any of them, linked.
 */
export async function benchConditionRequest(
  leaves: (typeof BENCH_CONDITION_LEAVES)[number],
  evm: EvmDemoHoldings,
  svm: SolanaDemoHoldings,
  l2ChainId: bigint,
): Promise<Record<string, unknown>> {
  const ethereum = getAddress(hexlify(randomBytes(20)));
  const ethereumLeaves = [
    { chain: "ethereum", contract_address: evm.erc20 },
    { chain: "ethereum", contract_address: evm.erc1155, token_id: "1" },
    { chain: "ethereum", contract_address: evm.erc721 },
    { chain: "ethereum", contract_address: evm.erc1155, token_id: "2" },
  ];
  if (leaves === 1) return { owners: { ethereum }, condition: ethereumLeaves[0] };
  const player = await generateKeyPairSigner();
  const [signed] = await player.signMessages([createSignableMessage(linkMessage(ethereum, l2ChainId))]);
  const signature = signed[player.address];
  const solanaMints = [svm.splMint, svm.t22Mint, svm.nftMint, ...svm.collection];
  const half = leaves / 2;
  const evmPart = Array.from({ length: half }, (_, index) => ({
    ...ethereumLeaves[index % ethereumLeaves.length],
    min: String(index + 1),
  }));
  const svmPart = Array.from({ length: half }, (_, index) => ({
    chain: "solana",
    token_mint_address: solanaMints[index % solanaMints.length],
    min: String(index + 1),
  }));
  return {
    owners: { ethereum, solana: player.address },
    condition: leaves === 4 ? { all: [...evmPart, ...svmPart] } : { any: [...evmPart, ...svmPart] },
    links: { solana: getBase58Decoder().decode(signature) },
  };
}

/**
 * Times `queries` fresh verdicts of each size in `BENCH_CONDITION_LEAVES`, attested and unattested, sent
 * one after another; one signed verdict of each size is checked with the deployed verifier's view.
 */
export async function measureConditionLatency(options: {
  queries: number;
  ask: (path: string, body: Record<string, unknown>, attest: boolean) => Promise<{ ms: number; text: string }>;
  evm: EvmDemoHoldings;
  svm: SolanaDemoHoldings;
  l2ChainId: bigint;
  verifier: AttestationVerifier;
}): Promise<{ timings: TimingSummary[]; verifiedOnChain: number }> {
  const timings: TimingSummary[] = [];
  let verifiedOnChain = 0;
  for (const leaves of BENCH_CONDITION_LEAVES) {
    for (const attest of [true, false]) {
      const samples: number[] = [];
      for (let index = 0; index < options.queries; index++) {
        const body = await benchConditionRequest(leaves, options.evm, options.svm, options.l2ChainId);
        const { ms, text } = await options.ask("/api/conditions", body, attest);
        samples.push(ms);
        if (attest && index === 0) {
          const json = (JSON.parse(text) as { data: { attestation: ConditionAttestationJson } }).data.attestation;
          const { attestation, signatures } = attestationFromJson(conditionKind, json);
          if (!(await options.verifier.isConditionAttestationValid(attestation, signatures, 3_600n)))
            throw new Error(`the deployed verifier refused a signed verdict of ${leaves} leaves`);
          verifiedOnChain += 1;
        }
      }
      timings.push(summarize(`${attest ? "signed verdict" : "unsigned verdict"}, ${leaves} leaf${leaves === 1 ? "" : "s"}`, samples));
    }
  }
  return { timings, verifiedOnChain };
}
