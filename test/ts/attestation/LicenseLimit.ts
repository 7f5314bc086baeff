import type { AttestationJson, ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
import { expect } from "chai";

import { chooseQuorumSet } from "../../../src/api/attestation-hub/quorum-set.ts";

import { attestationDomain, attestationFromJson, signAttestation } from "../../../src/common/attestation.ts";

import { balanceKind, conditionKind } from "@avn/protocol/attestation-kinds";

import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";

import type { AttestationSigner } from "../../../src/node/attestation-signer.ts";

import type { ConditionSigner } from "../../../src/node/condition-signer.ts";

import {
  connectNode,
  honestConditionSigner,
  honestSigner,
  L2_CHAIN_ID,
  startAttestationL2,
  startHubApi,
  until,
  type AttestationL2,
} from "./fixture.ts";

type Answerer = Pick<AttestationSigner, "answer">;
type ConditionAnswerer = Pick<ConditionSigner, "answer">;

describe("the hub settles only on a set the verifier accepts: at most 16 licenses (issue 46, finding 1)", function () {
  this.timeout(180_000);

  describe("chooseQuorumSet", function () {
    it("takes the set that reaches the quorum with the fewest licenses, then the fewest signatures, then the earliest", function () {
      // The finding: 2 then 15 licenses with quorum 3 named 17 together; the 15 alone reach it.
      expect(chooseQuorumSet([2, 15], 3, 16)).to.deep.equal([1]);
      expect(chooseQuorumSet([2], 3, 16)).to.equal(undefined);
      expect(chooseQuorumSet([1, 1, 1, 3], 3, 16)).to.deep.equal([3]);
      expect(chooseQuorumSet([1, 1, 1], 3, 16)).to.deep.equal([0, 1, 2]);
      expect(chooseQuorumSet([1, 1], 2, 16)).to.deep.equal([0, 1]);
      expect(chooseQuorumSet([10, 4, 5], 8, 16)).to.deep.equal([1, 2]); // 4 + 5 name fewer licenses than 10
      expect(chooseQuorumSet([4, 5, 9], 8, 16)).to.deep.equal([2]); // as few licenses, in one signature
      expect(chooseQuorumSet([10, 10], 12, 16)).to.equal(undefined); // 20 agree, but no set within 16
      expect(chooseQuorumSet([17, 1], 1, 16)).to.deep.equal([1]); // a signature over the limit is never taken
      expect(chooseQuorumSet([0, 2], 2, 16)).to.deep.equal([1]);
    });
  });

  describe("a network of quorum 3: a node of 2 licenses answers first, then a node of 15", function () {
    let sources: SourceFixtures;
    let l2: AttestationL2;
    let hubApi: Awaited<ReturnType<typeof startHubApi>>;
    const disconnects: Array<() => Promise<void>> = [];

    before(async function () {
      sources = await startSourceFixtures();
      l2 = await startAttestationL2({ quorum: 3n, licensesPerNode: [2, 15] });
      hubApi = await startHubApi(sources, l2, l2.verifier, { deadlineMs: 5_000 });
    });
    afterEach(async function () {
      for (const disconnect of disconnects.splice(0)) await disconnect();
      await until("every node gone", () => hubApi.hub.stats.list().every((node) => !node.connected));
    });
    after(async function () {
      await hubApi?.api.close();
      await l2?.stop();
      await sources?.stop();
    });

    const post = (path: string, body: unknown) =>
      fetch(`${hubApi.api.baseUrl}${path}`, {
        method: "POST",
        headers: { authorization: hubApi.api.apiKey, "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    /**
     * The two nodes, the second answering each round only once the first has sent its answer to it: the
     * order in which the old hub grouped 2 + 15 = 17 licenses. `second` may replace the big node's signer.
     */
    const joinInOrder = async (second?: Answerer) => {
      const [small, big] = l2.nodes;
      // Per round id: resolved once the small node's answer is out.
      const sent = new Map<string, { promise: Promise<void>; resolve: () => void }>();
      const gate = (id: string) => {
        if (!sent.has(id)) {
          let resolve = () => {};
          const promise = new Promise<void>((done) => (resolve = done));
          sent.set(id, { promise, resolve });
        }
        return sent.get(id)!;
      };
      const first = <R extends { id: string }>(signer: { answer(request: R): Promise<unknown> }) => ({
        async answer(request: R) {
          const reply = await signer.answer(request);
          // Resolved after this turn, once the hub client has sent `reply` on its socket.
          setImmediate(() => gate(request.id).resolve());
          return reply;
        },
      });
      const after = <R extends { id: string }>(signer: { answer(request: R): Promise<unknown> }) => ({
        async answer(request: R) {
          await gate(request.id).promise;
          return signer.answer(request);
        },
      });
      disconnects.push(
        connectNode(hubApi.hubUrl, small, first(honestSigner(sources, small, l2.verifier)) as Answerer, {
          conditionSigner: first(honestConditionSigner(sources, small, l2.verifier)) as ConditionAnswerer,
        }),
        connectNode(hubApi.hubUrl, big, after(second ?? honestSigner(sources, big, l2.verifier)) as Answerer, {
          conditionSigner: after(honestConditionSigner(sources, big, l2.verifier)) as ConditionAnswerer,
        }),
      );
      await until("both nodes admitted", () => hubApi.hub.stats.list().filter((node) => node.connected).length === 2);
    };

    it("answers 20 of 20 balance and condition requests with signatures valid on-chain, each set within 16 licenses", async function () {
      await joinInOrder();
      const verifier = l2.contracts.attestationVerifier;
      const condition = {
        owners: { ethereum: sources.evm.holder },
        condition: { chain: "ethereum", contract_address: sources.evm.erc20, min: "1" },
      };
      let valid = 0;
      const named: number[] = []; // licenses each answer names
      for (let index = 0; index < 20; index += 1) {
        if (index % 2 === 0) {
          const query =
            index % 4 === 0
              ? { path: "/api/ccq-evm?attest=true", body: { user_address: sources.evm.holder, contract_address: sources.evm.erc20 } }
              : { path: "/api/ccq-svm?attest=true", body: { owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint } };
          const response = await post(query.path, query.body);
          expect(response.status, await response.clone().text()).to.equal(200);
          const json = ((await response.json()) as { data: { attestation: AttestationJson } }).data.attestation;
          named.push(json.signatures.flatMap((signature) => signature.licenseIds).length);
          const { attestation, signatures } = attestationFromJson(balanceKind, json);
          if (await verifier.isAttestationValid(attestation, signatures, 3_600n)) valid += 1;
        } else {
          const response = await post("/api/conditions?attest=true", condition);
          expect(response.status, await response.clone().text()).to.equal(200);
          const json = ((await response.json()) as { data: { attestation: ConditionAttestationJson } }).data.attestation;
          named.push(json.signatures.flatMap((signature) => signature.licenseIds).length);
          const { attestation, signatures } = attestationFromJson(conditionKind, json);
          if (await verifier.isConditionAttestationValid(attestation, signatures, 3_600n)) valid += 1;
        }
      }
      expect(`${valid} of 20 valid on-chain, licenses named: ${named.join(" ")}`).to.equal(
        `20 of 20 valid on-chain, licenses named: ${named.map(() => 15).join(" ")}`,
      );
    });

    it("answers 503 saying why when the only agreeing answer names more than 16 licenses", async function () {
      const [small, big] = l2.nodes;
      // The big node signs for 17 licenses, its 15 and the small node's 2: no set holding it verifies.
      const honest = honestSigner(sources, big, l2.verifier);
      const oversized: Answerer = {
        async answer(request) {
          const reply = await honest.answer(request);
          if (reply.type !== "attestation") return reply;
          const licenseIds = [...big.licenseIds, ...small.licenseIds];
          const { attestation } = attestationFromJson(balanceKind, {
            domain: { name: "", version: "", chainId: 0, verifyingContract: l2.verifier },
            message: reply.message,
            signatures: [],
          });
          return {
            ...reply,
            licenseIds: licenseIds.map(String),
            signature: await signAttestation(balanceKind, big.burner, attestationDomain(L2_CHAIN_ID, l2.verifier), attestation, licenseIds),
          };
        },
      };
      await joinInOrder(oversized);
      const response = await post("/api/ccq-evm?attest=true", { user_address: sources.evm.holder, contract_address: sources.evm.erc20 });
      expect(response.status).to.equal(503);
      const body = (await response.json()) as { message: string };
      expect(body.message).to.match(/the most licenses agreeing on one answer was 2 of quorum 3/);
      expect(body.message).to.match(/1 answer\(s\) named more than 16 licenses and were left out/);
    });
  });
});
