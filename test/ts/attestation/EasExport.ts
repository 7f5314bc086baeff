import { expect } from "chai";
import { AbiCoder, Contract, JsonRpcProvider, Wallet, zeroPadValue } from "ethers";

import { EAS_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { BALANCE_EAS_SCHEMA, CONDITION_EAS_SCHEMA, easSchemaUid, type EasExportJson } from "@avn/protocol/eas";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { EAS_NEEDS_ATTEST, EAS_NOT_ENABLED } from "../../../src/api/server/eas-export.ts";
import { easArtifact } from "../../../src/op/eas-artifacts.ts";
import { installEasPredeploys } from "../../../src/op/eas-predeploys.ts";
import { readExporter } from "../../../src/api/attestation-hub/exporter-check.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";
import type { TestApi } from "../../helpers/api.ts";
import { connectNode, honestConditionSigner, honestSigner, startAttestationL2, startHubApi, until, type AttestationL2 } from "./fixture.ts";

const coder = AbiCoder.defaultAbiCoder();

/** `?attest=true&eas=true`: the answer carries the call that exports it to EAS, and that call works as sent. */
describe("attested answers exported to EAS (?eas=true)", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let l2: AttestationL2;
  let exporter: Contract;
  let withExporter: Awaited<ReturnType<typeof startHubApi>>;
  let withoutExporter: Awaited<ReturnType<typeof startHubApi>>;
  let eas: Contract;
  let sender: Wallet;
  const disconnects: Array<() => Promise<void>> = [];

  before(async function () {
    sources = await startSourceFixtures();
    l2 = await startAttestationL2();
    await installEasPredeploys(l2.ethers.provider, "anvil");
    exporter = (await l2.ethers.deployContract("AttestationExporter", [l2.verifier, EAS_PREDEPLOYS.EAS])) as unknown as Contract;
    await exporter.waitForDeployment();
    // What the API reads at start: the exporter's verifier checked against its own, and its EAS.
    const settings = await readExporter(
      new JsonRpcPool({ urls: [l2.anvil.rpcUrl], timeoutMs: 2_000 }),
      await exporter.getAddress(),
      l2.verifier,
    );
    withExporter = await startHubApi(sources, l2, l2.verifier, { exporter: settings });
    withoutExporter = await startHubApi(sources, l2, l2.verifier);
    // Three of the four nodes on the hub with an exporter: a quorum of two with one to spare.
    for (const node of l2.nodes.slice(0, 3))
      disconnects.push(
        connectNode(withExporter.hubUrl, node, honestSigner(sources, node, l2.verifier), {
          conditionSigner: honestConditionSigner(sources, node, l2.verifier),
        }),
      );
    await until("three nodes admitted", () => withExporter.hub.stats.list().filter((node) => node.connected).length === 3);
    // A default ethers wallet on the L2: its own estimate, nonce and fees. (Straight to anvil, which mines at
    // once, with no RPC front: ethers' 250 ms cache of reads would hand a second send the first one's nonce.)
    sender = new Wallet(
      devAccount(1).privateKey,
      new JsonRpcProvider(l2.anvil.rpcUrl, undefined, { staticNetwork: true, cacheTimeout: -1 }),
    );
    eas = new Contract(EAS_PREDEPLOYS.EAS, easArtifact("EAS").abi, sender.provider);
  });
  after(async function () {
    for (const disconnect of disconnects) await disconnect();
    sender?.provider?.destroy();
    await withExporter?.api.close();
    await withoutExporter?.api.close();
    await l2?.stop();
    await sources?.stop();
  });

  const post = (api: TestApi, path: string, body: unknown) =>
    fetch(`${api.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: api.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const evmBody = () => ({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 });
  const svmBody = () => ({ owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint });
  const conditionBody = () => ({
    owners: { ethereum: sources.evm.holder },
    condition: { chain: "ethereum", contract_address: sources.evm.erc20, min: "1" },
  });

  /** Sends `data.eas` as it is, from the default wallet, and returns the EAS attestation it made. */
  const sendExport = async (exported: EasExportJson) => {
    const receipt = (await (await sender.sendTransaction({ to: exported.exporter, data: exported.calldata })).wait())!;
    expect(receipt.status).to.equal(1);
    const event = receipt.logs.map((log) => exporter.interface.parseLog(log)).find((parsed) => parsed?.name === "AttestationExported");
    return (await eas.getFunction("getAttestation")(event!.args.uid as string)) as {
      attester: string;
      schema: string;
      recipient: string;
      data: string;
    };
  };

  it("refuses eas=true without attest=true (400, before anything is read) and answers 501 where no exporter is set", async function () {
    for (const [path, body] of [
      ["/api/ccq-evm?eas=true", evmBody()],
      ["/api/ccq-evm?eas=true&attest=false", evmBody()],
      ["/api/ccq-evm?eas=true&proof=true", evmBody()],
      ["/api/ccq-svm?eas=true", svmBody()],
      ["/api/conditions?eas=true", conditionBody()],
    ] as const) {
      const response = await post(withExporter.api, path, body);
      expect(response.status, path).to.equal(400);
      expect(await response.json()).to.deep.equal({ status: 400, message: EAS_NEEDS_ATTEST });
    }
    for (const [path, body] of [
      ["/api/ccq-evm?attest=true&eas=true", evmBody()],
      ["/api/conditions?attest=true&eas=true", conditionBody()],
    ] as const) {
      const response = await post(withoutExporter.api, path, body);
      expect(response.status, path).to.equal(501);
      expect(await response.json()).to.deep.equal({ status: 501, message: EAS_NOT_ENABLED });
    }
    const malformed = await post(withExporter.api, "/api/ccq-evm?attest=true&eas=yes", evmBody());
    expect(malformed.status).to.equal(400);
  });

  it("adds data.eas after data.attestation to an attested Ethereum balance; sent as is, EAS attests it to the owner", async function () {
    const response = await post(withExporter.api, "/api/ccq-evm?attest=true&eas=true", evmBody());
    expect(response.status).to.equal(200);
    const { data } = (await response.json()) as {
      data: Record<string, unknown> & { eas: EasExportJson; attestation: { message: Record<string, string> } };
    };
    expect(Object.keys(data)).to.deep.equal(["user_address", "asset", "attestation", "eas"]);
    const exporterAddress = await exporter.getAddress();
    expect(data.eas).to.deep.include({ eas: EAS_PREDEPLOYS.EAS, exporter: exporterAddress, function: "exportAttestation" });
    expect(data.eas.schema).to.equal(await exporter.getFunction("BALANCE_SCHEMA_UID")());
    expect(data.eas.schema).to.equal(easSchemaUid(BALANCE_EAS_SCHEMA, exporterAddress, false));

    const stored = await sendExport(data.eas);
    expect([stored.attester, stored.schema, stored.recipient]).to.deep.equal([exporterAddress, data.eas.schema, sources.evm.holder]);
    const message = data.attestation.message;
    const [decoded] = coder.decode(["tuple(uint8,bytes32,bytes32,uint256,bytes32,uint64,uint64)"], stored.data);
    expect((decoded as unknown[]).map(String)).to.deep.equal(
      [message.chain, message.owner, message.asset, message.balance, message.queryResultHash, message.sourceBlock, message.issuedAt].map(
        String,
      ),
    );
    expect(message.owner).to.equal(zeroPadValue(sources.evm.holder, 32).toLowerCase());
  });

  it("exports a Solana balance (no recipient) and a signed verdict under the verdict schema", async function () {
    const svm = await post(withExporter.api, "/api/ccq-svm?attest=true&eas=true", svmBody());
    expect(svm.status).to.equal(200);
    const svmData = ((await svm.json()) as { data: { eas: EasExportJson } }).data;
    expect((await sendExport(svmData.eas)).recipient).to.equal("0x0000000000000000000000000000000000000000");

    const verdict = await post(withExporter.api, "/api/conditions?attest=true&eas=true", conditionBody());
    expect(verdict.status).to.equal(200);
    const { data } = (await verdict.json()) as { data: Record<string, unknown> & { eas: EasExportJson } };
    expect(Object.keys(data).slice(-2)).to.deep.equal(["attestation", "eas"]);
    expect(data.eas.function).to.equal("exportConditionAttestation");
    expect(data.eas.schema).to.equal(easSchemaUid(CONDITION_EAS_SCHEMA, await exporter.getAddress(), false));
    const stored = await sendExport(data.eas);
    expect(stored.schema).to.equal(await exporter.getFunction("CONDITION_SCHEMA_UID")());
  });

  it("refuses at start an exporter of another verifier, and an address that is no exporter", async function () {
    const pool = new JsonRpcPool({ urls: [l2.anvil.rpcUrl], timeoutMs: 2_000 });
    const address = await exporter.getAddress();
    const other = "0x00000000000000000000000000000000000a77ac";
    const wrongVerifier = await readExporter(pool, address, other).catch((error: unknown) => error);
    expect((wrongVerifier as Error).message).to.include(`checks answers with the verifier ${l2.verifier}, not ATTESTATION_VERIFIER`);
    const noExporter = await readExporter(pool, other, l2.verifier).catch((error: unknown) => error);
    expect((noExporter as Error).message).to.include("is not an AttestationExporter on the L2");
    expect(await readExporter(pool, address, l2.verifier)).to.deep.equal({ address, eas: EAS_PREDEPLOYS.EAS });
  });

  it("documents ?eas and data.eas in /openapi.json", async function () {
    const spec = (await (await fetch(`${withExporter.api.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, { post: { parameters: Array<{ name: string; in: string }>; responses: Record<string, unknown> } }>;
    };
    for (const path of ["/api/ccq-evm", "/api/ccq-svm", "/api/conditions"]) {
      const post = spec.paths[path].post;
      expect(
        post.parameters.some((parameter) => parameter.name === "eas" && parameter.in === "query"),
        path,
      ).to.equal(true);
      expect(JSON.stringify(post.responses["200"]), path).to.include("exportConditionAttestation");
    }
  });
});
