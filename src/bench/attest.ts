import { address, getAddressDecoder } from "@solana/kit";
import { getAddress, hexlify, randomBytes } from "ethers";

import { AttestationVerifier__factory } from "../../typechain-types/index.ts";
import { attestationFromJson } from "../common/attestation.ts";
import { type AttestationJson } from "@avn/protocol/attestation";
import { withBenchNetwork } from "./bench-network.ts";
import { summarize, type TimingSummary } from "./bridge-timing.ts";

export interface AttestBenchResult {
  timings: TimingSummary[];
  /** Answers checked with the deployed AttestationVerifier's isAttestationValid. */
  verifiedOnChain: number;
}

type Query = { path: "/api/ccq-evm" | "/api/ccq-svm"; body: Record<string, string> };

/**
 * On a fresh devnet with the verification network of `npm start` (three circuit nodes connected to the
 * API's hub, quorum 2): `queries` distinct attested queries (half Ethereum, half Solana: fresh owners of
 * the demo tokens, so no cache anywhere answers them) sent one after another, timed from request to
 * answer; the same with one node killed (SIGKILL); and the same queries unattested, for comparison.
 * Every attested answer must be a 200 with a quorum; one per chain and phase is checked on-chain.
 */
export async function measureAttestedLatency(options: {
  queries: number;
  projectRoot: string;
  log?: (line: string) => void;
}): Promise<AttestBenchResult> {
  const log = options.log ?? (() => undefined);
  // Latency is measured, not the demo key's rate limit (60 burst, 10/s).
  const apiEnv = { RATE_LIMIT_CAPACITY: "1000000", RATE_LIMIT_REFILL_PER_SECOND: "1000000" };
  return withBenchNetwork(
    { name: "attest", projectRoot: options.projectRoot, apiEnv, onProgress: log },
    async ({ l2, contracts, network }) => {
      const verifier = AttestationVerifier__factory.connect(contracts.AttestationVerifier, l2);
      const { api, apiKey, evmDemo, svmDemo } = network;
      const ask = async (query: Query, attest: boolean) => {
        const started = performance.now();
        const response = await fetch(`${api.url}${query.path}${attest ? "?attest=true" : ""}`, {
          method: "POST",
          headers: { authorization: apiKey, "content-type": "application/json" },
          body: JSON.stringify(query.body),
        });
        const text = await response.text();
        const ms = performance.now() - started;
        if (response.status !== 200) throw new Error(`${query.path}${attest ? "?attest=true" : ""} answered ${response.status}: ${text}`);
        return { ms, attestation: attest ? (JSON.parse(text) as { data: { attestation: AttestationJson } }).data.attestation : undefined };
      };
      const distinctQueries = (count: number): Query[] =>
        Array.from({ length: count }, (_, index): Query =>
          index % 2 === 0
            ? { path: "/api/ccq-evm", body: { user_address: getAddress(hexlify(randomBytes(20))), contract_address: evmDemo.erc20 } }
            : {
                path: "/api/ccq-svm",
                body: { owner_address: address(getAddressDecoder().decode(randomBytes(32))), token_mint_address: svmDemo.splMint },
              },
        );
      let verifiedOnChain = 0;
      const run = async (label: string, attest: boolean) => {
        const samples: Record<string, number[]> = { "/api/ccq-evm": [], "/api/ccq-svm": [] };
        const checked = new Set<string>();
        for (const query of distinctQueries(options.queries)) {
          const { ms, attestation } = await ask(query, attest);
          samples[query.path].push(ms);
          if (attestation !== undefined && !checked.has(query.path)) {
            checked.add(query.path);
            const { attestation: struct, signatures } = attestationFromJson(attestation);
            if (!(await verifier.isAttestationValid(struct, signatures, 3_600n)))
              throw new Error(`the deployed verifier refused an attested ${query.path} answer`);
            verifiedOnChain += 1;
          }
        }
        const all = [...samples["/api/ccq-evm"], ...samples["/api/ccq-svm"]];
        return [
          summarize(`${label}, both chains`, all),
          summarize(`${label}, ccq-evm`, samples["/api/ccq-evm"]),
          summarize(`${label}, ccq-svm`, samples["/api/ccq-svm"]),
        ];
      };

      log(`Warming up, then ${options.queries} distinct attested queries with three nodes…`);
      for (const query of distinctQueries(10)) await ask(query, true);
      const timings = [...(await run("attested, 3 nodes", true)), ...(await run("unattested, same kind of queries", false))];
      log("Killing one node (SIGKILL)…");
      await network.nodes[2].stop("SIGKILL");
      timings.push(...(await run("attested, 2 nodes (one killed)", true)));
      return { timings, verifiedOnChain };
    },
  );
}
