import { expect } from "chai";
import { Wallet } from "ethers";

import { loadApiConfig, redactedConfig } from "../../../src/api/config.ts";
import { attestationDomain, recoverAttestationSigner } from "../../../src/common/attestation.ts";
import { balanceKind } from "@avn/protocol/attestation-kinds";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { loadNodeConfig } from "../../../src/node/config.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";
import { honestSigner, L2_CHAIN_ID, startAttestationL2, startHubApi, type AttestationL2 } from "./fixture.ts";
import { balanceMessageSchema } from "@avn/protocol/attestation-kinds";

/** What `?attest=true` changes and what it must not; the node's own refusals; the configuration. */
describe("attested answers: unchanged plain answers, the hub switched off, the node's refusals", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let l2: AttestationL2;
  let plainApi: TestApi;
  let hubApi: Awaited<ReturnType<typeof startHubApi>>;

  before(async function () {
    sources = await startSourceFixtures();
    l2 = await startAttestationL2();
    plainApi = await startTestApi(sources);
    hubApi = await startHubApi(sources, l2, l2.verifier);
  });
  after(async function () {
    await hubApi?.api.close();
    await plainApi?.close();
    await l2?.stop();
    await sources?.stop();
  });

  const post = (api: TestApi, path: string, body: unknown) =>
    fetch(`${api.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: api.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const queries = () =>
    [
      ["/api/ccq-evm", { user_address: sources.evm.holder, contract_address: sources.evm.erc20 }],
      ["/api/ccq-evm", { user_address: sources.evm.empty, contract_address: sources.evm.erc721 }],
      ["/api/ccq-svm", { owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint }],
      ["/api/ccq-svm", { owner_address: sources.svm.emptyOwner, token_mint_address: sources.svm.t22Mint }],
    ] as const;

  it("keeps unattested answers byte-for-byte, with the hub on or off, with or without ?attest=false", async function () {
    for (const [path, body] of queries()) {
      const reference = await post(plainApi, path, body);
      const referenceText = await reference.text();
      for (const [api, suffix] of [
        [hubApi.api, ""],
        [hubApi.api, "?attest=false"],
        [plainApi, "?attest=false"],
      ] as const) {
        const response = await post(api, `${path}${suffix}`, body);
        expect(response.status).to.equal(200);
        expect(response.headers.get("content-type")).to.equal(reference.headers.get("content-type"));
        expect(await response.text()).to.equal(referenceText);
      }
    }
  });

  it("without an attestation hub: ?attest=true answers 501 with the envelope; a malformed attest value is a 400", async function () {
    const [path, body] = queries()[0];
    const off = await post(plainApi, `${path}?attest=true`, body);
    expect(off.status).to.equal(501);
    expect(await off.json()).to.deep.equal({ status: 501, message: "Attested answers are not enabled on this server" });
    const malformed = await post(hubApi.api, `${path}?attest=yes`, body);
    expect(malformed.status).to.equal(400);
    // Keys are checked first, as for every request.
    const unauthenticated = await fetch(`${hubApi.api.baseUrl}${path}?attest=true`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(unauthenticated.status).to.equal(401);
  });

  it("documents ?attest, data.attestation, 501 and 503 in /openapi.json", async function () {
    const spec = (await (await fetch(`${hubApi.api.baseUrl}/openapi.json`)).json()) as {
      paths: Record<
        string,
        {
          post: {
            parameters: Array<{ name: string; in: string }>;
            responses: Record<
              string,
              { content: { "application/json": { schema: { properties: { data: { properties: Record<string, unknown> } } } } } }
            >;
          };
        }
      >;
    };
    for (const path of ["/api/ccq-evm", "/api/ccq-svm"]) {
      const operation = spec.paths[path].post;
      expect(operation.parameters.map((parameter) => `${parameter.in}:${parameter.name}`)).to.include("query:attest");
      expect(operation.responses).to.include.keys("501", "503");
      const data = operation.responses["200"].content["application/json"].schema.properties.data.properties;
      expect(data).to.include.keys("attestation");
      // The message's fields are the balance kind's own schema, the one the hub checks node frames with.
      const attestation = data.attestation as { properties: { message: { properties: Record<string, unknown>; required: string[] } } };
      expect(Object.keys(attestation.properties.message.properties)).to.deep.equal(Object.keys(balanceMessageSchema.shape));
      expect(attestation.properties.message.required).to.have.members(Object.keys(balanceMessageSchema.shape));
    }
  });

  describe("the node's signer", function () {
    // The issue time a hub would pin: the L2 head's (the test L2 mines only per transaction, so its clock
    // can be far from the wall clock).
    let l2Time = 0n;
    beforeEach(async function () {
      l2Time = BigInt((await l2.ethers.provider.getBlock("latest"))!.timestamp);
    });
    const request = (fields: Partial<{ chain: number; owner: string; asset: string; sourceBlock: string; issuedAt: string }>) => ({
      type: "attest" as const,
      id: "r1",
      chain: 0,
      owner: sources.evm.holder,
      asset: sources.evm.erc20,
      sourceBlock: "0",
      issuedAt: l2Time.toString(),
      ...fields,
    });
    const rpc = async (method: string, params: unknown[] = []) => {
      const response = await fetch(sources.anvil.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await response.json()) as { result: string }).result;
    };
    const headOf = async () => BigInt(await rpc("eth_blockNumber"));

    it("signs what it read itself at the pinned block, recoverable to its burner, for its licenses", async function () {
      const node = l2.nodes[0];
      const head = await headOf();
      const reply = await honestSigner(sources, node, l2.verifier).answer(request({ sourceBlock: head.toString() }));
      expect(reply.type).to.equal("attestation");
      if (reply.type !== "attestation") return;
      expect(reply.licenseIds).to.deep.equal([node.licenseId.toString()]);
      const attestation = {
        ...reply.message,
        chain: 0 as const,
        balance: BigInt(reply.message.balance),
        sourceBlock: head,
        issuedAt: BigInt(reply.message.issuedAt),
      };
      const licenseIds = reply.licenseIds.map(BigInt);
      expect(
        recoverAttestationSigner(balanceKind, attestationDomain(L2_CHAIN_ID, l2.verifier), attestation, licenseIds, reply.signature),
      ).to.equal(node.burner.address);
      expect(reply.message.owner).to.equal(`0x${"0".repeat(24)}${sources.evm.holder.slice(2).toLowerCase()}`);
    });

    it("refuses an attestation whose position or issue time is off: an old block, a skewed issue time, a missing token, no license", async function () {
      const node = l2.nodes[0];
      await rpc("anvil_mine", ["0x50"]); // enough blocks for one 65 below the head
      const head = await headOf();
      const signer = honestSigner(sources, node, l2.verifier);
      const refusal = async (fields: Parameters<typeof request>[0], sign = signer) => {
        const reply = await sign.answer(request(fields));
        expect(reply.type).to.equal("refusal");
        return reply.type === "refusal" ? reply.reason : "";
      };
      expect(await refusal({ sourceBlock: String(head + 1_000n) })).to.match(/source read failed/);
      expect(await refusal({ sourceBlock: head.toString(), issuedAt: String(l2Time + 3_600n) })).to.match(/off this node's L2 head/);
      expect(await refusal({ sourceBlock: head.toString(), asset: Wallet.createRandom().address })).to.equal("not found");
      expect(
        await refusal(
          { sourceBlock: head.toString() },
          honestSigner(sources, node, l2.verifier, () => []),
        ),
      ).to.match(/no license/);
      expect(await refusal({ sourceBlock: String(head - 65n) })).to.match(/below the head/);
    });
  });

  describe("configuration", function () {
    const base = { EVM_RPC_URLS: "http://127.0.0.1:1", SOLANA_RPC_URLS: "http://127.0.0.1:2" };
    it("turns the hub on only with all four of its settings, and redacts the L2 URLs", function () {
      expect(loadApiConfig(base).ATTESTATION_VERIFIER).to.equal(undefined);
      expect(() => loadApiConfig({ ...base, ATTESTATION_L2_RPC_URL: "http://l2.example/key" })).to.throw(/ATTESTATION_NODE_REGISTRY/);
      const hub = {
        ...base,
        ATTESTATION_L2_RPC_URL: "https://l2.example/v2/SECRET",
        ATTESTATION_L2_WS_URL: "wss://l2.example/ws/SECRET",
        ATTESTATION_NODE_REGISTRY: l2.nodeRegistry,
        ATTESTATION_VERIFIER: l2.verifier,
      };
      // The WebSocket URL is required with the others (the hub's clock is the L2 head), and only ws:// or wss://.
      expect(() => loadApiConfig({ ...hub, ATTESTATION_L2_WS_URL: undefined })).to.throw(/ATTESTATION_L2_WS_URL/);
      expect(() => loadApiConfig({ ...hub, ATTESTATION_L2_WS_URL: "https://l2.example/ws" })).to.throw(/ATTESTATION_L2_WS_URL/);
      const full = loadApiConfig(hub);
      expect(full.ATTESTATION_DEADLINE_MS).to.equal(3_000);
      expect(JSON.stringify(redactedConfig(full))).to.not.include("SECRET");
    });

    it("needs the verifier address with a hub URL on the node", function () {
      const node = {
        OWNERS_ALLOWLIST: l2.nodes[0].owner.address,
        L2_RPC_URLS: "http://127.0.0.1:3",
        VERIFICATION_REGISTRY: l2.verificationRegistry,
        ...base,
      };
      expect(loadNodeConfig(node).ATTESTATION_HUB_URL).to.equal(undefined);
      expect(() => loadNodeConfig({ ...node, ATTESTATION_HUB_URL: "ws://127.0.0.1:8787/attest/ws" })).to.throw(/ATTESTATION_VERIFIER/);
      expect(
        loadNodeConfig({ ...node, ATTESTATION_HUB_URL: "ws://127.0.0.1:8787/attest/ws", ATTESTATION_VERIFIER: l2.verifier })
          .ATTESTATION_VERIFIER,
      ).to.equal(l2.verifier);
    });
  });
});
