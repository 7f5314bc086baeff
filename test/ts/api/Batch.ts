import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { getAddressDecoder } from "@solana/kit";
import { expect } from "chai";
import fc from "fast-check";
import { Contract, ContractFactory, getAddress, hexlify, Interface, randomBytes, toQuantity, Wallet } from "ethers";
import hre from "hardhat";

import { EvmBalanceReader } from "../../../src/chains/evm/balance-reader.ts";
import { SourceError } from "../../../src/chains/rpc/errors.ts";
import { DEFAULT_HEAD_TTL_MS } from "../../../src/chains/rpc/head-cache.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";
import { SolanaBalanceReader } from "../../../src/chains/solana/balance-reader.ts";
import { createFailoverTransport } from "../../../src/chains/solana/failover-transport.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { ABOVE_2_53, startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";
import { MAX_BATCH_ITEMS } from "../../../src/api/batch.ts";
import { loadApiConfig } from "../../../src/api/config.ts";
import { startTestApi, type TestApi } from "../../helpers/api.ts";
import { eventually } from "../../helpers/devnet.ts";

/** One JSON-RPC call as an upstream saw it. */
interface SeenCall {
  method: string;
  params: unknown[];
}

/**
 * A pass-through in front of a real upstream (anvil, the LiteSVM endpoint) that counts the HTTP requests
 * it forwards and records their JSON-RPC calls: what "upstream requests" means, counted at the upstream.
 * `failWhen` answers HTTP 503 instead of forwarding (an upstream failing for one query).
 */
interface RecordingUpstream {
  url: string;
  httpRequests: number;
  calls: SeenCall[];
  failWhen: (body: string) => boolean;
  /** Runs after the upstream answered and before the answer is passed on (to move the chain meanwhile). */
  beforeReply: (calls: SeenCall[]) => Promise<void>;
  reset(): void;
  close(): Promise<void>;
}

async function recordingUpstream(target: string): Promise<RecordingUpstream> {
  const upstream: RecordingUpstream = {
    url: "",
    httpRequests: 0,
    calls: [],
    failWhen: () => false,
    beforeReply: async () => undefined,
    reset() {
      upstream.httpRequests = 0;
      upstream.calls = [];
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      upstream.httpRequests += 1;
      const parsed = JSON.parse(body) as SeenCall | SeenCall[];
      const calls = (Array.isArray(parsed) ? parsed : [parsed]).map((call) => ({ method: call.method, params: call.params }));
      upstream.calls.push(...calls);
      if (upstream.failWhen(body)) {
        response.writeHead(503).end();
        return;
      }
      fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body }).then(
        async (answer) => {
          const text = await answer.text();
          await upstream.beforeReply(calls);
          response.writeHead(answer.status, { "content-type": "application/json" }).end(text);
        },
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return upstream;
}

const MULTICALL3 = new Interface([
  "function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns ((bool success, bytes returnData)[] returnData)",
]);
/** The calls inside an aggregate3 eth_call's calldata. */
const aggregatedCalls = (call: SeenCall) =>
  (MULTICALL3.decodeFunctionData("aggregate3", (call.params[0] as { data: string }).data)[0] as unknown[]).length;
const randomOwner = () => getAddress(hexlify(randomBytes(20)));

describe("API: POST /api/ccq-evm/batch and /api/ccq-svm/batch on a real server", function () {
  this.timeout(90_000);
  let sources: SourceFixtures;
  let evmUpstream: RecordingUpstream;
  let svmUpstream: RecordingUpstream;
  let api: TestApi;

  before(async function () {
    sources = await startSourceFixtures();
    evmUpstream = await recordingUpstream(sources.anvil.rpcUrl);
    svmUpstream = await recordingUpstream(sources.solanaRpc.url);
    // The helper's read timeout (2 s): a failing upstream here answers 503 at once, never by timing out, and
    // under npm test's load a read that takes over 500 ms must not turn into a 500 entry.
    api = await startTestApi(sources, { evmUrls: [evmUpstream.url], solanaUrls: [svmUpstream.url] });
  });
  after(async function () {
    await api?.close();
    await evmUpstream?.close();
    await svmUpstream?.close();
    await sources?.stop();
  });

  const post = (target: TestApi, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${target.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: target.apiKey, "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  const expectError = async (response: Response, status: number, message: RegExp) => {
    const text = await response.text();
    expect(response.status, text).to.equal(status);
    const body = JSON.parse(text) as { status: number; message: string };
    expect(body.status).to.equal(status);
    expect(body.message).to.match(message);
  };
  /** The batch's raw answer must be the envelope around each single endpoint's raw answer, in order. */
  const expectEntriesAsSingle = async (path: string, items: unknown[], positionField: string) => {
    const singles: string[] = [];
    for (const item of items) singles.push(await (await post(api, path, JSON.stringify(item))).text());
    const response = await post(api, `${path}/batch`, items);
    const text = await response.text();
    expect(response.status, text).to.equal(200);
    const position = (JSON.parse(text) as { data: Record<string, number> }).data[positionField];
    expect(position).to.be.a("number");
    expect(text).to.equal(
      `{"status":200,"message":"Batch Processed Successfully","data":{"${positionField}":${position},"results":[${singles.join(",")}]}}`,
    );
    return { text, position, singles };
  };

  describe("answers", function () {
    it("answers mixed good, malformed and not-found EVM items in order, each exactly as /api/ccq-evm would", async function () {
      const { holder, erc20, erc721, empty } = sources.evm;
      const badChecksum = `0x${holder.slice(2).replace(/[a-f]/, (c) => c.toUpperCase())}`;
      const items = [
        { user_address: holder, contract_address: erc20 }, // above 2^53, exact
        { user_address: badChecksum, contract_address: erc20 },
        { user_address: holder, contract_address: empty }, // no code: 404
        { user_address: holder },
        42,
        null,
        ["user_address"],
        { user_address: holder, contract_address: erc20, extra: 1 },
        { user_address: 7, contract_address: erc20 },
        { user_address: "x".repeat(101), contract_address: erc20 },
        { user_address: holder.toLowerCase(), contract_address: erc721.toLowerCase() },
        { user_address: holder, contract_address: "0x0000000000000000000000000000000000000002" }, // precompile: 404
        { user_address: "0x1234", contract_address: erc20 },
      ];
      const { text } = await expectEntriesAsSingle("/api/ccq-evm", items, "blockNumber");
      expect(text).to.include(`"balance":${ABOVE_2_53}`);
      const statuses = (JSON.parse(text) as { data: { results: Array<{ status: number }> } }).data.results.map((entry) => entry.status);
      expect(statuses).to.deep.equal([200, 400, 404, 400, 400, 400, 400, 400, 400, 400, 200, 404, 400]);
      expect(text).to.include(`{"status":400,"message":"Invalid request: body must be object"}`);
      const metrics = await (await fetch(`${api.baseUrl}/metrics`)).text();
      expect(metrics).to.match(/api_requests_total\{route="\/api\/ccq-evm\/batch",status="200"\} \d+/);
    });

    it("answers mixed SPL, Token-2022, NFT, empty, not-found and malformed Solana items, each exactly as /api/ccq-svm would", async function () {
      const { owner, splMint, t22Mint, nftMint, nftOwner, emptyOwner } = sources.svm;
      const items = [
        { owner_address: owner, token_mint_address: splMint },
        { owner_address: owner, token_mint_address: t22Mint }, // above 2^53
        { owner_address: owner, token_mint_address: emptyOwner }, // no mint account: 404
        { owner_address: "0OIl", token_mint_address: splMint },
        { owner_address: nftOwner, token_mint_address: nftMint },
        "owner",
        { owner_address: emptyOwner, token_mint_address: splMint },
        { token_mint_address: splMint },
      ];
      const { text } = await expectEntriesAsSingle("/api/ccq-svm", items, "slot");
      expect(text).to.include(`"balance":${ABOVE_2_53}`);
      const statuses = (JSON.parse(text) as { data: { results: Array<{ status: number }> } }).data.results.map((entry) => entry.status);
      expect(statuses).to.deep.equal([200, 200, 404, 400, 200, 400, 200, 400]);
    });

    it("answers any items (property-based): one entry each, exactly the single endpoint's answer, never a failed batch", async function () {
      const { holder, erc20 } = sources.evm;
      const field = fc.oneof(
        fc.string({ maxLength: 110 }),
        fc.integer(),
        fc.constant(null),
        fc.constantFrom(holder, holder.toLowerCase(), erc20, "0x1234"),
      );
      const item = fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.record({ user_address: field, contract_address: field }, { requiredKeys: [] }),
        fc.record({ user_address: field, contract_address: field, extra: fc.jsonValue({ maxDepth: 1 }) }),
      );
      // Fastify refuses __proto__ / constructor.prototype keys in any body (prototype poisoning): not items' business.
      const clean = (items: unknown[]) => !/"(__proto__|constructor)"/.test(JSON.stringify(items));
      await fc.assert(
        fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 4 }).filter(clean), async (items) => {
          await expectEntriesAsSingle("/api/ccq-evm", items, "blockNumber");
        }),
        { numRuns: 40 },
      );
    });

    it("answers an item whose upstream read fails as a 500 entry, and the others as usual", async function () {
      const { owner, splMint, emptyOwner } = sources.svm;
      const unlucky = randomOwnerSolana(); // never asked before: no cached answer
      svmUpstream.failWhen = (body) => body.includes(unlucky);
      try {
        const response = await post(api, "/api/ccq-svm/batch", [
          { owner_address: owner, token_mint_address: splMint },
          { owner_address: unlucky, token_mint_address: splMint },
          { owner_address: emptyOwner, token_mint_address: splMint },
        ]);
        expect(response.status).to.equal(200);
        const { results } = ((await response.json()) as { data: { results: Array<{ status: number; message: string }> } }).data;
        expect(results.map((entry) => entry.status)).to.deep.equal([200, 500, 200]);
        expect(results[1]).to.deep.equal({ status: 500, message: "Internal error: the balance could not be fetched" });
      } finally {
        svmUpstream.failWhen = () => false;
      }
    });
  });

  describe("one position per batch", function () {
    it("reads every EVM item at one block, the one it states, also across gas burners and after the chain moved", async function () {
      const provider = devnetProvider(sources.anvil.rpcUrl, 1);
      // The API asks for the head at most once per DEFAULT_HEAD_TTL_MS: a server of its own (reading through
      // the recording upstream) whose head cache reads a clock the test moves, instead of a sleep.
      let now = Date.now();
      const evm = new EvmBalanceReader({
        rpc: new JsonRpcPool({ urls: [evmUpstream.url], timeoutMs: 2_000, backoffMs: 10 }),
        now: () => now,
      });
      const clocked = await startTestApi(sources, { evmUrls: [evmUpstream.url], solanaUrls: [svmUpstream.url], evm });
      try {
        const minter = new Wallet(devAccount(0).privateKey, provider);
        const artifact = await hre.artifacts.readArtifact("PlainERC20");
        const deployed = await new ContractFactory(artifact.abi, artifact.bytecode, minter).deploy(minter.address, 1_000n);
        await deployed.waitForDeployment();
        const token = new Contract(await deployed.getAddress(), artifact.abi, minter);
        const receiver = randomOwner();
        const burner = hexlify(randomBytes(20));
        await provider.send("anvil_setCode", [burner, "0x5b600056"]); // JUMPDEST PUSH1 0 JUMP: burns all the gas
        const items = [
          { user_address: receiver, contract_address: await token.getAddress() },
          { user_address: sources.evm.holder, contract_address: burner },
          { user_address: sources.evm.holder, contract_address: sources.evm.erc20 },
        ];
        const ask = async () => {
          evmUpstream.reset();
          const response = await post(clocked, "/api/ccq-evm/batch", items);
          expect(response.status).to.equal(200);
          return (
            (await response.json()) as {
              data: { blockNumber: number; results: Array<{ status: number; data?: { asset: { balance: number } } }> };
            }
          ).data;
        };
        const before = await ask();
        expect(before.blockNumber).to.equal(await provider.getBlockNumber());
        expect(before.results.map((entry) => entry.status)).to.deep.equal([200, 404, 200]);
        expect(before.results[0].data!.asset.balance).to.equal(0);
        const calls = evmUpstream.calls.filter((call) => call.method === "eth_call");
        expect(calls.length, "the burner forces a split").to.be.greaterThan(1);
        for (const call of calls) expect(call.params[1]).to.equal(toQuantity(before.blockNumber));

        await (await token.getFunction("transfer")(receiver, 7n)).wait();
        now += DEFAULT_HEAD_TTL_MS - 1;
        const within = await ask();
        expect(within.blockNumber, "within the head's TTL: the head is not asked again").to.equal(before.blockNumber);
        expect(within.results[0].data!.asset.balance).to.equal(0);
        now += 1;
        const after = await ask();
        expect(after.blockNumber, "the TTL over: the head is asked again").to.equal(before.blockNumber + 1);
        expect(after.results[0].data!.asset.balance, "no answer cached at the older block").to.equal(7);
        for (const call of evmUpstream.calls.filter((seen) => seen.method === "eth_call"))
          expect(call.params[1]).to.equal(toQuantity(after.blockNumber));
      } finally {
        await clocked.close();
        provider.destroy();
      }
    });

    it("keeps every EVM item at the stated block when the chain moves while the batch is read", async function () {
      const upstream = await recordingUpstream(sources.anvil.rpcUrl);
      // No head cache: a reader that asked for the head again would see the block mined below.
      const evm = new EvmBalanceReader({ rpc: new JsonRpcPool({ urls: [upstream.url], timeoutMs: 2_000 }), headTtlMs: 0 });
      const moving = await startTestApi(sources, { evmUrls: [upstream.url], evm });
      try {
        upstream.beforeReply = async (calls) => {
          if (calls.some((call) => call.method === "eth_blockNumber"))
            await fetch(sources.anvil.rpcUrl, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "evm_mine", params: [] }),
            });
        };
        const items = Array.from({ length: 5 }, () => ({ user_address: randomOwner(), contract_address: sources.evm.erc20 }));
        const response = await post(moving, "/api/ccq-evm/batch", items);
        const { blockNumber } = ((await response.json()) as { data: { blockNumber: number } }).data;
        expect(upstream.calls.filter((call) => call.method === "eth_blockNumber")).to.have.length(1);
        const ethCalls = upstream.calls.filter((call) => call.method === "eth_call");
        expect(ethCalls).to.have.length(1);
        expect(ethCalls[0].params[1]).to.equal(toQuantity(blockNumber));
      } finally {
        await moving.close();
        await upstream.close();
      }
    });

    it("reads duplicates once and serves a repeated batch from the cache at the same block", async function () {
      // A server of its own whose head cache reads a clock that does not move, and whose answers are kept
      // an hour: both batches are answered at the head the first one reads, whatever time the machine takes
      // between them. (With the shared server's one-second head cache and wall clock, a head read by an
      // earlier test, behind blocks that other servers of this file mined since, could be replaced between
      // the two batches by the current one, and the second batch be read at another block.)
      const frozen = Date.now();
      const evm = new EvmBalanceReader({
        rpc: new JsonRpcPool({ urls: [evmUpstream.url], timeoutMs: 2_000, backoffMs: 10 }),
        now: () => frozen,
      });
      const cached = await startTestApi(sources, { evmUrls: [evmUpstream.url], solanaUrls: [svmUpstream.url], evm, cacheTtlMs: 3_600_000 });
      try {
        const owner = randomOwner();
        const items = [
          { user_address: owner, contract_address: sources.evm.erc20 },
          { user_address: owner.toLowerCase(), contract_address: sources.evm.erc20.toLowerCase() },
          { user_address: randomOwner(), contract_address: sources.evm.erc20 },
          { user_address: owner, contract_address: sources.evm.erc20 },
        ];
        evmUpstream.reset();
        const first = await post(cached, "/api/ccq-evm/batch", items);
        const firstBody = (await first.json()) as {
          data: { blockNumber: number; results: Array<{ status: number; data: { user_address: string } }> };
        };
        expect(firstBody.data.results.map((entry) => entry.status)).to.deep.equal([200, 200, 200, 200]);
        expect(firstBody.data.results[1].data.user_address, "each entry echoes its own item").to.equal(owner.toLowerCase());
        const ethCalls = evmUpstream.calls.filter((call) => call.method === "eth_call");
        expect(ethCalls).to.have.length(1);
        expect(aggregatedCalls(ethCalls[0]), "two distinct queries").to.equal(2);

        evmUpstream.reset();
        const second = (await (await post(cached, "/api/ccq-evm/batch", items)).json()) as { data: { blockNumber: number } };
        expect(second.data.blockNumber).to.equal(firstBody.data.blockNumber);
        expect(
          evmUpstream.calls.filter((call) => call.method === "eth_call"),
          "all from the cache",
        ).to.have.length(0);
      } finally {
        await cached.close();
      }
    });

    it("reads every Solana item at or after the finalized slot it states (minContextSlot)", async function () {
      const { owner, splMint, t22Mint, nftMint, nftOwner } = sources.svm;
      svmUpstream.reset();
      const response = await post(api, "/api/ccq-svm/batch", [
        { owner_address: owner, token_mint_address: splMint },
        { owner_address: owner, token_mint_address: t22Mint },
        { owner_address: nftOwner, token_mint_address: nftMint },
        { owner_address: randomOwnerSolana(), token_mint_address: splMint },
      ]);
      const body = (await response.json()) as { data: { slot: number; results: Array<{ status: number }> } };
      expect(body.data.results.map((entry) => entry.status)).to.deep.equal([200, 200, 200, 200]);
      const reads = svmUpstream.calls.filter((call) => call.method === "getAccountInfo" || call.method === "getTokenAccountsByOwner");
      expect(reads.length).to.be.at.least(2);
      for (const read of reads) {
        const options = read.params.at(-1) as { minContextSlot?: number; commitment?: string };
        // @solana/kit leaves out `commitment: "finalized"`, the RPC's default.
        expect([undefined, "finalized"]).to.include(options.commitment);
        expect(options.minContextSlot, read.method).to.be.a("number").and.at.least(body.data.slot);
      }
    });
  });

  describe("the readers' pinned reads, which the batch routes use", function () {
    it("EVM: reads a pinned query at its block, beside unpinned ones; one aggregate3 per block", async function () {
      const provider = devnetProvider(sources.anvil.rpcUrl, 1);
      try {
        const minter = new Wallet(devAccount(1).privateKey, provider);
        const artifact = await hre.artifacts.readArtifact("PlainERC20");
        const deployed = await new ContractFactory(artifact.abi, artifact.bytecode, minter).deploy(minter.address, 1_000n);
        const token = new Contract(await deployed.getAddress(), artifact.abi, minter);
        const receiver = randomOwner();
        const before = BigInt(await provider.getBlockNumber());
        await (await token.getFunction("transfer")(receiver, 7n)).wait();
        const head = BigInt(await provider.getBlockNumber());
        const reader = new EvmBalanceReader({ rpc: new JsonRpcPool({ urls: [evmUpstream.url], timeoutMs: 2_000 }) });
        evmUpstream.reset();
        const [pinned, latest, pinnedAtHead] = await Promise.all([
          reader.balanceOf(await token.getAddress(), receiver, before),
          reader.balanceOf(await token.getAddress(), receiver),
          reader.balanceOf(sources.evm.erc20, sources.evm.holder, head),
        ]);
        expect([pinned.balance, pinned.blockNumber]).to.deep.equal([0n, before]);
        expect([latest.balance, latest.blockNumber]).to.deep.equal([7n, head]);
        expect([pinnedAtHead.balance, pinnedAtHead.blockNumber]).to.deep.equal([ABOVE_2_53, head]);
        const ethCalls = evmUpstream.calls.filter((call) => call.method === "eth_call");
        expect(ethCalls.map((call) => [call.params[1], aggregatedCalls(call)])).to.have.deep.members([
          [toQuantity(before), 1],
          [toQuantity(head), 2], // the latest block's query and the one pinned at it share their aggregate3
        ]);
      } finally {
        provider.destroy();
      }
    });

    it("Solana: sends minContextSlot with both reads and refuses an answer from before it", async function () {
      const reader = new SolanaBalanceReader(createFailoverTransport({ urls: [svmUpstream.url], timeoutMs: 2_000 }));
      const slot = await reader.latestSlot();
      const { owner, splMint } = sources.svm;
      svmUpstream.reset();
      expect((await reader.balanceOf(owner, splMint, { minContextSlot: slot })).balance).to.equal(7_500_000n);
      // Sent at once, both bounded (the accounts need not wait for the mint's answer).
      expect(
        svmUpstream.calls.map((call) => [call.method, (call.params.at(-1) as { minContextSlot?: number }).minContextSlot]),
      ).to.have.deep.members([
        ["getAccountInfo", Number(slot)],
        ["getTokenAccountsByOwner", Number(slot)],
      ]);
      // The LiteSVM endpoint, unlike a real RPC, ignores minContextSlot: the reader's own check catches it.
      const refused = await reader.balanceOf(owner, splMint, { minContextSlot: slot + 1_000n }).catch((error: unknown) => error);
      expect(refused).to.be.instanceOf(SourceError);
      expect(String(refused)).to.match(/before the requested slot/);
    });
  });

  it("costs at most 2 upstream HTTP requests for 100 distinct ERC-20 queries: the block number and one aggregate3", async function () {
    const upstream = await recordingUpstream(sources.anvil.rpcUrl);
    const fresh = await startTestApi(sources, { evmUrls: [upstream.url] });
    try {
      const items = Array.from({ length: 100 }, () => ({ user_address: randomOwner(), contract_address: sources.evm.erc20 }));
      const response = await post(fresh, "/api/ccq-evm/batch", items);
      const body = (await response.json()) as { data: { results: Array<{ status: number }> } };
      expect(body.data.results).to.have.length(100);
      expect(body.data.results.every((entry) => entry.status === 200)).to.equal(true);
      expect(upstream.httpRequests).to.be.at.most(2);
      expect(upstream.calls.map((call) => call.method).sort()).to.deep.equal(["eth_blockNumber", "eth_call"]);
      expect(aggregatedCalls(upstream.calls.find((call) => call.method === "eth_call")!)).to.equal(100);
    } finally {
      await fresh.close();
      await upstream.close();
    }
  });

  describe("requests refused as a whole", function () {
    const evmItem = () => ({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 });

    it("answers 400 when the body is not an array of 1 to 100 items, not JSON, too large, or not JSON at all", async function () {
      await expectError(await post(api, "/api/ccq-evm/batch", evmItem()), 400, /^Invalid request: body must be array$/);
      await expectError(await post(api, "/api/ccq-evm/batch", []), 400, /^Invalid request: body must NOT have fewer than 1 items$/);
      await expectError(
        await post(api, "/api/ccq-svm/batch", Array.from({ length: 101 }, evmItem)),
        400,
        /^Invalid request: body must NOT have more than 100 items$/,
      );
      await expectError(await post(api, "/api/ccq-evm/batch", "[{not json"), 400, /not valid JSON/);
      await expectError(await post(api, "/api/ccq-evm/batch", ""), 400, /not valid JSON/);
      await expectError(
        await post(api, "/api/ccq-evm/batch", JSON.stringify([evmItem()]), { "content-type": "text/plain" }),
        400,
        /Content-Type/,
      );
      const oversized = Array.from({ length: 100 }, () => ({ user_address: "x".repeat(700), contract_address: "y" }));
      await expectError(await post(api, "/api/ccq-evm/batch", oversized), 400, /too large/);
    });

    it("takes 100 items with every field at its 100-character maximum: far above the single routes' 4 KiB", async function () {
      const items = Array.from({ length: 100 }, () => ({ user_address: "x".repeat(100), contract_address: "y".repeat(100) }));
      const body = JSON.stringify(items, null, 2);
      expect(body.length).to.be.greaterThan(20_000);
      const response = await post(api, "/api/ccq-evm/batch", body);
      expect(response.status).to.equal(200);
      const { results } = ((await response.json()) as { data: { results: Array<{ status: number; message: string }> } }).data;
      expect(results).to.have.length(100);
      for (const entry of results)
        expect(entry).to.deep.equal({ status: 400, message: "user_address must be 0x followed by 40 hexadecimal digits" });
    });

    it("answers 400 to ?attest=true, and 401 for a missing or unknown key before looking at the body", async function () {
      await expectError(await post(api, "/api/ccq-evm/batch?attest=true", [evmItem()]), 400, /^attest is not supported on batch requests$/);
      await expectError(await post(api, "/api/ccq-svm/batch?attest=true", [evmItem()]), 400, /^attest is not supported on batch requests$/);
      expect((await post(api, "/api/ccq-evm/batch?attest=false", [evmItem()])).status).to.equal(200);
      await expectError(await post(api, "/api/ccq-evm/batch", "{not json", { authorization: "" }), 401, /Missing API key/);
      await expectError(
        await post(api, "/api/ccq-svm/batch", "{not json", { authorization: "avn_unknown", "content-type": "text/xml" }),
        401,
        /Unknown API key/,
      );
      await expectError(await post(api, "/api/ccq-%65vm/batch", [evmItem()], { authorization: "" }), 401, /Missing API key/);
    });
  });

  it("with ?partial=true, counts each item against the rate limit: the tail beyond the tokens gets 429 entries, no token at all a 429", async function () {
    const limited = await startTestApi(sources, { policy: { capacity: 4, refillPerSecond: 0.01 } });
    try {
      const item = { user_address: sources.evm.holder, contract_address: sources.evm.erc20 };
      expect((await post(limited, "/api/ccq-evm", item)).status).to.equal(200); // 3 tokens left
      const bad = { user_address: "0x1234", contract_address: sources.evm.erc20 };
      const response = await post(limited, "/api/ccq-evm/batch?partial=true", [item, bad, item, item, bad]);
      expect(response.status).to.equal(200);
      const { results } = ((await response.json()) as { data: { results: Array<{ status: number; message: string }> } }).data;
      expect(results.map((entry) => entry.status)).to.deep.equal([200, 400, 200, 429, 429]);
      expect(results[3]).to.deep.equal({ status: 429, message: "Rate limit exceeded" });
      expect(response.headers.get("ratelimit-limit")).to.equal("4");
      expect(response.headers.get("ratelimit-remaining")).to.equal("0");
      expect(response.headers.get("ratelimit-policy")).to.equal("4;w=400");
      expect(Number(response.headers.get("ratelimit-reset"))).to.be.within(390, 400);
      expect(response.headers.get("retry-after"), "a 200 carries no Retry-After").to.equal(null);

      const refused = await post(limited, "/api/ccq-svm/batch?partial=true", [item]);
      expect(refused.status).to.equal(429);
      expect(await refused.json()).to.deep.equal({ status: 429, message: "Rate limit exceeded" });
      expect(Number(refused.headers.get("retry-after"))).to.be.within(1, 100);
      expect(refused.headers.get("ratelimit-remaining")).to.equal("0");
    } finally {
      await limited.close();
    }
  });

  it("without ?partial, answers a batch whole or refuses it whole: 429 with Retry-After when the tokens will come, without when they never can", async function () {
    const limited = await startTestApi(sources, { policy: { capacity: 6, refillPerSecond: 0.01 } });
    try {
      const item = { user_address: sources.evm.holder, contract_address: sources.evm.erc20 };
      // A refused request spends the token taken on its arrival, whatever refuses it (5 left after this one).
      await expectError(await post(limited, "/api/ccq-evm/batch?partial=yes", [item]), 400, /^partial must be "true" or "false"$/);
      expect((await post(limited, "/api/ccq-evm", item)).status).to.equal(200); // 4 tokens left
      // More items than the bucket can ever hold: no wait helps, so no Retry-After (3 left).
      const tooLarge = await post(limited, "/api/ccq-evm/batch", Array(7).fill(item));
      expect(tooLarge.status).to.equal(429);
      expect(await tooLarge.json()).to.deep.equal({
        status: 429,
        message: "A batch of 7 items needs 7 rate-limit tokens and this key's bucket holds 6: send at most 6 items, or add ?partial=true",
      });
      expect(tooLarge.headers.get("retry-after")).to.equal(null);
      // Within the bucket's size but beyond its tokens now (2 left after this one's arrival, 3 more needed):
      // refused whole, nothing answered, no further token taken, Retry-After when all 3 will be there.
      const beyond = await post(limited, "/api/ccq-svm/batch", [item, item, item, item]);
      expect(beyond.status).to.equal(429);
      expect(await beyond.json()).to.deep.equal({
        status: 429,
        message: "Rate limit exceeded: a batch of 4 items needs 4 tokens at once; retry after Retry-After, or add ?partial=true",
      });
      expect(Number(beyond.headers.get("retry-after"))).to.be.within(99, 101); // 1 token more at 0.01 per second
      // The 2 tokens left pay for a batch of two, answered whole.
      const fits = await post(limited, "/api/ccq-evm/batch", [item, item]);
      expect(fits.status).to.equal(200);
      const { results } = ((await fits.json()) as { data: { results: Array<{ status: number }> } }).data;
      expect(results.map((entry) => entry.status)).to.deep.equal([200, 200]);
      expect(fits.headers.get("ratelimit-remaining")).to.equal("0");
    } finally {
      await limited.close();
    }
  });

  it("answers a newcomer's first full batch whole under the default rate limit (a fresh bucket holds a full batch)", async function () {
    const defaults = loadApiConfig({ EVM_RPC_URLS: sources.anvil.rpcUrl, SOLANA_RPC_URLS: sources.solanaRpc.url });
    expect(defaults.RATE_LIMIT_CAPACITY).to.be.at.least(MAX_BATCH_ITEMS);
    const policy = { capacity: defaults.RATE_LIMIT_CAPACITY, refillPerSecond: defaults.RATE_LIMIT_REFILL_PER_SECOND };
    const fresh = await startTestApi(sources, { policy });
    try {
      const items = Array.from({ length: MAX_BATCH_ITEMS }, () => ({
        user_address: Wallet.createRandom().address,
        contract_address: sources.evm.erc20,
      }));
      const first = await post(fresh, "/api/ccq-evm/batch", items);
      expect(first.status).to.equal(200);
      const { results } = ((await first.json()) as { data: { results: Array<{ status: number }> } }).data;
      expect(results.filter((entry) => entry.status === 200)).to.have.length(MAX_BATCH_ITEMS);
      // The same again at once finds the bucket (nearly) empty, refilling 10 tokens a second: refused
      // whole, plainly, with a Retry-After (for its arrival token, or for all 100).
      const again = await post(fresh, "/api/ccq-evm/batch", items);
      expect(again.status).to.equal(429);
      expect(((await again.json()) as { message: string }).message).to.match(/^Rate limit exceeded/);
      expect(Number(again.headers.get("retry-after"))).to.be.within(1, Math.ceil(MAX_BATCH_ITEMS / policy.refillPerSecond));
    } finally {
      await fresh.close();
    }
  });

  it("tells the usage seam once per single request and once per batch item, with the route template and status", async function () {
    const recorded: Array<[string, string, number]> = [];
    const metered = await startTestApi(sources, {
      policy: { capacity: 7, refillPerSecond: 0.01 },
      usage: { record: (keyId, endpoint, status) => recorded.push([keyId, endpoint, status]), remainingQuota: () => Infinity },
    });
    try {
      const keyId = (await metered.keys.verify(metered.apiKey))!.id;
      const item = { user_address: sources.evm.holder, contract_address: sources.evm.erc20 };
      const { owner, splMint } = sources.svm;
      const expected: Array<[string, string, number]> = [];
      const step = async (response: Promise<Response>, status: number, calls: Array<[string, number]>) => {
        expect((await response).status).to.equal(status);
        expected.push(...calls.map(([endpoint, itemStatus]): [string, string, number] => [keyId, endpoint, itemStatus]));
        await eventually(
          async () => recorded.length,
          (length) => length >= expected.length,
          2_000,
        );
        expect(recorded).to.deep.equal(expected);
      };
      await step(post(metered, "/api/ccq-evm", item), 200, [["/api/ccq-evm", 200]]);
      await step(post(metered, "/api/ccq-svm", { owner_address: owner }), 400, [["/api/ccq-svm", 400]]);
      await step(post(metered, "/api/ccq-evm", item, { authorization: "avn_unknown" }), 401, []);
      await step(
        post(metered, "/api/ccq-evm/batch", [
          item,
          { user_address: owner },
          { user_address: sources.evm.holder, contract_address: sources.evm.empty },
        ]),
        200,
        [
          ["/api/ccq-evm/batch", 200],
          ["/api/ccq-evm/batch", 400],
          ["/api/ccq-evm/batch", 404],
        ],
      );
      await step(
        post(metered, "/api/ccq-svm/batch?partial=true", [
          { owner_address: owner, token_mint_address: splMint },
          { owner_address: owner, token_mint_address: splMint },
          item,
        ]),
        200,
        [
          // 7 tokens: 1 + 1 + 3 taken before, so this batch gets 2 and its last item is refused
          ["/api/ccq-svm/batch", 200],
          ["/api/ccq-svm/batch", 200],
          ["/api/ccq-svm/batch", 429],
        ],
      );
      await step(post(metered, "/api/ccq-evm", item), 429, [["/api/ccq-evm", 429]]);
      await step(post(metered, "/api/ccq-evm/batch", [item]), 429, [["/api/ccq-evm/batch", 429]]);
      // Nothing more: a later request's record (a marker) is told after every earlier one's, and none came between.
      await step(post(metered, "/api/ccq-svm", { owner_address: owner, token_mint_address: splMint }), 429, [["/api/ccq-svm", 429]]);
    } finally {
      await metered.close();
    }
  });

  it("tells the usage seam once about a batch refused as a whole", async function () {
    const recorded: Array<[string, number]> = [];
    const metered = await startTestApi(sources, {
      usage: { record: (_keyId, endpoint, status) => recorded.push([endpoint, status]), remainingQuota: () => Infinity },
    });
    try {
      expect((await post(metered, "/api/ccq-evm/batch", {})).status).to.equal(400);
      expect((await post(metered, "/api/ccq-svm/batch?attest=true", [{}])).status).to.equal(400);
      // Once each: a later request's record (a marker) is told after every earlier one's, and none came between.
      expect((await post(metered, "/api/ccq-evm", {})).status).to.equal(400);
      await eventually(
        async () => recorded.length,
        (length) => length >= 3,
        2_000,
      );
      expect(recorded).to.deep.equal([
        ["/api/ccq-evm/batch", 400],
        ["/api/ccq-svm/batch", 400],
        ["/api/ccq-evm", 400],
      ]);
    } finally {
      await metered.close();
    }
  });

  it("describes both batch routes, their item shape, limits and position in /openapi.json", async function () {
    type Operation = {
      requestBody: {
        content: {
          "application/json": {
            schema: { type: string; minItems: number; maxItems: number; items: { required: string[]; additionalProperties: boolean } };
          };
        };
      };
      responses: Record<
        string,
        { content?: { "application/json": { schema: { properties: { data: { properties: Record<string, { type: string }> } } } } } }
      >;
      parameters?: Array<{ name: string; in: string }>;
    };
    const spec = (await (await fetch(`${api.baseUrl}/openapi.json`)).json()) as { paths: Record<string, { post: Operation }> };
    for (const [path, fields, position] of [
      ["/api/ccq-evm/batch", ["user_address", "contract_address"], "blockNumber"],
      ["/api/ccq-svm/batch", ["owner_address", "token_mint_address"], "slot"],
    ] as const) {
      const operation = spec.paths[path]?.post;
      expect(operation, path).to.not.equal(undefined);
      const body = operation.requestBody.content["application/json"].schema;
      expect(body).to.include({ type: "array", minItems: 1, maxItems: 100 });
      expect(body.items.required).to.deep.equal(fields);
      expect(body.items.additionalProperties).to.equal(false);
      expect(Object.keys(operation.responses)).to.include.members(["200", "400", "401", "429", "500"]);
      const data = operation.responses["200"].content!["application/json"].schema.properties.data.properties;
      expect(data[position].type).to.equal("integer");
      expect(data.results.type).to.equal("array");
      expect(operation.parameters?.map((parameter) => parameter.name)).to.include("attest");
    }
  });
});

/** A random 32-byte key: an owner with no token account. */
function randomOwnerSolana(): string {
  return getAddressDecoder().decode(randomBytes(32));
}
