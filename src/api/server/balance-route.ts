import type { FastifyInstance } from "fastify";

import { ApiError } from "../api-error.ts";
import { attestQuerySchema } from "../attestation-hub/openapi.ts";
import type { AttestationService } from "../attestation-hub/attested-query.ts";
import { PROOF_WITH_ATTEST, type BalanceProver } from "./balance-proof-route.ts";
import { PROOF_RESPONSES, proofQueryProperty } from "./proof-schema.ts";
import type { BalanceBody, BalanceChain } from "./chains.ts";
import { bodySchema, ERROR_RESPONSES, success, successSchema, withWallets } from "./responses.ts";
import { balanceEas, easExporterFor, easQueryProperty } from "./eas-export.ts";

/**
 * Registers a chain's single balance route (`POST /api/ccq-evm`, `POST /api/ccq-svm`): the body's
 * fields checked, then either an attested answer (`?attest=true`, 501 without the hub; 400 for a query the
 * attestation cannot bind, such as an ERC-1155 token id; with `?eas=true` also the call that exports it to EAS,
 * eas-export.ts), a proved one (`?proof=true`, on a chain with a
 * `prover`: the balance at the rollup's L1 block with its storage proof, balance-proof-route.ts) or the
 * balance at the chain's head, cached while the head stands still.
 */
export function registerBalanceRoute<
  Query extends { key: string },
  Value extends { balance: bigint; queryResult: string; wallets?: string[] },
>(
  app: FastifyInstance,
  chain: BalanceChain<Query, Value>,
  attestation: AttestationService | undefined,
  prover?: BalanceProver<Query>,
): void {
  const provable = prover !== undefined;
  app.post<{ Body: BalanceBody; Querystring: { attest?: string; eas?: string; proof?: string } }>(
    chain.url,
    {
      config: { requiresApiKey: true, attestable: true, provable },
      schema: {
        summary: chain.summary,
        security: [{ apiKey: [] }],
        querystring: {
          ...attestQuerySchema,
          properties: { ...attestQuerySchema.properties, ...easQueryProperty, ...(provable ? proofQueryProperty : {}) },
        },
        body: bodySchema(chain.wire.body),
        response: {
          200: successSchema(chain.wire.data, provable),
          ...ERROR_RESPONSES,
          ...(provable ? PROOF_RESPONSES : {}),
        },
      },
    },
    async (request) => {
      const query = chain.parse(request.body);
      const echo = chain.echo(request.body, query);
      const attest = request.query.attest === "true";
      // Before anything else: `eas=true` without `attest=true` is wrong whatever the server offers.
      if (!attest) easExporterFor(request.query, attestation);
      if (prover !== undefined && request.query.proof === "true") {
        // Before the 501: the request is wrong whatever the server offers.
        if (attest) throw new ApiError(400, PROOF_WITH_ATTEST);
        const refusal = prover.unprovable(query);
        if (refusal !== undefined) throw new ApiError(400, refusal);
        const proved = await prover.prove(query);
        return success(echo, proved.balance, proved.queryResult, undefined, proved.proof);
      }
      const proofOnly = chain.proofOnly(query);
      if (proofOnly !== undefined) throw new ApiError(400, proofOnly);
      if (attest) {
        // Before the 501: the request is wrong whatever the server offers.
        const refusal = chain.unattestable(query);
        if (refusal !== undefined) throw new ApiError(400, refusal);
        if (attestation === undefined) throw new ApiError(501, "Attested answers are not enabled on this server");
        const exporter = easExporterFor(request.query, attestation);
        const attested = await chain.attest(attestation, query);
        const answer = success(echo, attested.balance, attested.queryResult, attested.attestation);
        return exporter === undefined ? answer : { ...answer, data: { ...answer.data, eas: balanceEas(exporter, attested.attestation) } };
      }
      const head = await chain.head();
      const result = await chain.cache.get(head, query.key, () => chain.read(query));
      return withWallets(success(echo, result.balance, result.queryResult), result);
    },
  );
}
