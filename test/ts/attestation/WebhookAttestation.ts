import { balanceKind } from "@avn/protocol/attestation-kinds";
import { expect } from "chai";
import { Contract, getAddress, hexlify, randomBytes, Wallet } from "ethers";

import { attestAt, type AttestationService } from "../../../src/api/attestation-hub/attested-query.ts";
import { WebhookService } from "../../../src/api/webhooks/webhook-service.ts";
import { attestationFromJson, recoverAttestationSigner } from "../../../src/common/attestation.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { WebhookReceiver } from "../../../src/devnet/webhook-receiver.ts";
import { connectNode, honestSigner, startAttestationL2, startHubApi, until, type AttestationL2 } from "./fixture.ts";
import { testWebhookService } from "../../helpers/webhooks.ts";

/** `attest: true` on a subscription: each delivery carries the quorum's attestation of the holding at the change's block. */
describe("webhooks with attest: true", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let l2: AttestationL2;
  let hubApi: Awaited<ReturnType<typeof startHubApi>>;
  let service: WebhookService;
  let receiver: WebhookReceiver;
  const disconnects: Array<() => Promise<void>> = [];

  before(async function () {
    sources = await startSourceFixtures();
    l2 = await startAttestationL2();
    receiver = new WebhookReceiver();
    let attestation: AttestationService | undefined;
    hubApi = await startHubApi(sources, l2, l2.verifier, {
      api: {
        withWebhooks: (db) => {
          service = testWebhookService(db, sources, {
            retry: { baseDelayMs: 50, maxDelayMs: 200, windowMs: 3_600_000 },
            // The hub's service exists once startHubApi returns; no delivery is attempted before.
            attest: async (chain, owner, asset, block) => (await attestAt(attestation!, chain, owner, asset, block)).attestation,
            onError: () => undefined,
          });
          return service.routes();
        },
      },
    });
    attestation = hubApi.service;
    service.start();
    for (const node of l2.nodes.slice(0, 2)) disconnects.push(connectNode(hubApi.hubUrl, node, honestSigner(sources, node, l2.verifier)));
    await until("2 nodes admitted", () => hubApi.hub.stats.list().filter((node) => node.connected).length === 2);
  });
  after(async function () {
    for (const disconnect of disconnects) await disconnect();
    await service?.close();
    await hubApi?.api.close();
    await receiver?.close();
    await l2?.stop();
    await sources?.stop();
  });

  const subscribe = (body: Record<string, unknown>) =>
    fetch(`${hubApi.api.baseUrl}/api/subscriptions`, {
      method: "POST",
      headers: { authorization: hubApi.api.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("adds the quorum-signed attestation of the new balance at the change's block", async function () {
    const url = await receiver.listen();
    const { erc20 } = sources.evm;
    const owner = getAddress(hexlify(randomBytes(20)));
    const response = await subscribe({ chain: "ethereum", owner, asset: erc20, url, attest: true });
    expect(response.status).to.equal(201);
    const { id } = (await response.json()) as { id: string };
    const provider = devnetProvider(sources.anvil.rpcUrl, 1);
    try {
      const token = new Contract(
        erc20,
        ["function transfer(address,uint256) returns (bool)"],
        new Wallet(devAccount(7).privateKey, provider),
      );
      await (await token.getFunction("transfer")(owner, 77n)).wait();
    } finally {
      provider.destroy();
    }
    await receiver.waitFor(() => receiver.forSubscription(id).length === 1);

    const [delivery] = receiver.forSubscription(id);
    const json = JSON.parse(delivery.raw) as { attestation: Parameters<typeof attestationFromJson>[1] };
    const { domain, attestation, signatures } = attestationFromJson(balanceKind, json.attestation);
    expect(attestation.balance).to.equal(77n);
    expect(attestation.sourceBlock).to.equal(delivery.body.block);
    const signers = signatures.map((signature) =>
      recoverAttestationSigner(balanceKind, domain, attestation, signature.licenseIds, signature.signature),
    );
    expect(signers.sort()).to.deep.equal(
      l2.nodes
        .slice(0, 2)
        .map((node) => node.burner.address)
        .sort(),
    );
  });

  it("refuses attest with a token_id (the attestation does not bind it) before anything else", async function () {
    const response = await subscribe({
      chain: "ethereum",
      owner: sources.evm.collector,
      asset: sources.evm.erc1155,
      token_id: "1",
      url: "http://127.0.0.1:1/",
      attest: true,
    });
    expect(response.status).to.equal(400);
    expect(((await response.json()) as { message: string }).message).to.match(/^token_id cannot be attested/);
  });
});
