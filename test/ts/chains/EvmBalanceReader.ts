import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { expect } from "chai";
import { Contract, ContractFactory, getAddress, hexlify, JsonRpcProvider, randomBytes, Wallet } from "ethers";
import hre from "hardhat";

import { EvmBalanceReader } from "../../../src/chains/evm/balance-reader.ts";
import { AssetNotFoundError, TokenIdRequiredError, UpstreamUnavailableError } from "../../../src/chains/rpc/errors.ts";
import { JsonRpcPool } from "../../../src/chains/rpc/json-rpc-pool.ts";
import { devAccount } from "../../../src/devnet/accounts.ts";
import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { installMulticall3 } from "../../../src/devnet/op/l2.ts";
import { MULTICALL3_ADDRESS } from "@avn/protocol/constants";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";

const ABOVE_2_53 = 2n ** 53n + 12_345n;
/** ERC-1155 ids the holder has: 0, a small one, and one above 2^53 (kept exactly, not as a float). */
const ID_ZERO = 0n;
const ID_SMALL = 7n;
const ID_ABOVE_2_53 = 2n ** 200n + 3n;
const MAX_UINT256 = 2n ** 256n - 1n;

/** A local HTTP server that answers JSON-RPC however `handler` says (down, slow, garbage). */
async function fakeUpstream(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/key/SECRET`, server };
}

describe("source adapter: EVM balances", function () {
  this.timeout(60_000);
  let anvil: AnvilInstance;
  let provider: JsonRpcProvider;
  let erc20: string;
  let erc721: string;
  let erc1155: string;
  let deployer: Wallet;
  const holder = Wallet.createRandom().address;
  const nobody = Wallet.createRandom().address;

  before(async function () {
    anvil = await startAnvil({ chainId: 1, disableCodeSizeLimit: hre.globalOptions.coverage });
    provider = devnetProvider(anvil.rpcUrl, 1);
    await installMulticall3(provider);
    deployer = new Wallet(devAccount(0).privateKey, provider);
    const deploy = async (name: string, args: unknown[]) => {
      const artifact = await hre.artifacts.readArtifact(name);
      const contract = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
      return contract.getAddress();
    };
    erc20 = await deploy("PlainERC20", [holder, ABOVE_2_53]);
    erc721 = await deploy("PlainERC721", [holder, 3]);
    erc1155 = await deploy("PlainERC1155", [holder, [ID_ZERO, ID_SMALL, ID_ABOVE_2_53], [5n, 11n, ABOVE_2_53]]);
  });
  after(async function () {
    provider?.destroy();
    await anvil?.stop();
  });

  const reader = (urls: string[], options: Partial<ConstructorParameters<typeof JsonRpcPool>[0]> = {}, headTtlMs?: number) => {
    const counts = { ok: 0, error: 0 };
    const rpc = new JsonRpcPool({
      urls,
      timeoutMs: 500,
      backoffMs: 10,
      onUpstreamRequest: (outcome) => (counts[outcome] += 1),
      ...options,
    });
    return { reader: new EvmBalanceReader({ rpc, headTtlMs }), counts };
  };

  it("reads an ERC-20 balance above 2^53 exactly, with the 32-byte word and the block it was read at", async function () {
    const { reader: evm } = reader([anvil.rpcUrl]);
    const result = await evm.balanceOf(erc20, holder);
    expect(result.balance).to.equal(ABOVE_2_53);
    expect(result.queryResult).to.equal(`0x${ABOVE_2_53.toString(16).padStart(64, "0")}`);
    expect(result.blockNumber).to.equal(BigInt(await provider.getBlockNumber()));
    expect((await evm.balanceOf(erc20, nobody)).balance).to.equal(0n);
  });

  it("counts an ERC-721 holder's tokens", async function () {
    const { reader: evm } = reader([anvil.rpcUrl]);
    expect((await evm.balanceOf(erc721, holder)).balance).to.equal(3n);
    expect((await evm.balanceOf(erc721, nobody)).queryResult).to.equal(`0x${"0".repeat(64)}`);
  });

  it("reports no code, and a contract without balanceOf, as not found", async function () {
    const { reader: evm } = reader([anvil.rpcUrl]);
    const noCode = await evm.balanceOf(nobody, holder).catch((error: unknown) => error);
    expect(noCode).to.be.instanceOf(AssetNotFoundError);
    const notAToken = await evm.balanceOf(MULTICALL3_ADDRESS, holder).catch((error: unknown) => error);
    expect(notAToken).to.be.instanceOf(AssetNotFoundError);
  });

  it("answers a precompile address as not found without asking upstream", async function () {
    const { reader: evm, counts } = reader([anvil.rpcUrl]);
    const sha256Precompile = `0x${"0".repeat(39)}2`; // answers any call with 32 bytes
    expect(await evm.balanceOf(sha256Precompile, holder).catch((error: unknown) => error)).to.be.instanceOf(AssetNotFoundError);
    expect(counts.ok + counts.error).to.equal(0);
  });

  it("keeps a gas-burning contract from spoiling the queries batched with it", async function () {
    // Two contracts whose every call loops until out of gas (JUMPDEST PUSH1 0 JUMP): together they
    // exhaust the whole eth_call, so the batch must be split to answer the others.
    const burners = [hexlify(randomBytes(20)), hexlify(randomBytes(20))];
    for (const burner of burners) await provider.send("anvil_setCode", [burner, "0x5b600056"]);
    const { reader: evm, counts } = reader([anvil.rpcUrl]);
    const owners = Array.from({ length: 40 }, () => hexlify(randomBytes(20)));
    const answers = await Promise.all([
      ...burners.map((burner) => evm.balanceOf(burner, holder).catch((error: unknown) => error)),
      evm.balanceOf(erc20, holder),
      evm.balanceOf(erc721, holder),
      ...owners.map((owner) => evm.balanceOf(erc20, owner)),
    ]);
    expect(answers[0]).to.be.instanceOf(AssetNotFoundError);
    expect(answers[1]).to.be.instanceOf(AssetNotFoundError);
    expect((answers[2] as { balance: bigint }).balance).to.equal(ABOVE_2_53);
    expect((answers[3] as { balance: bigint }).balance).to.equal(3n);
    expect(answers.slice(4).every((answer) => (answer as { balance: bigint }).balance === 0n)).to.equal(true);
    // Out of gas is the call's own failure: no upstream was blamed for it (no error outcome, no retry).
    expect(counts.error).to.equal(0);
  });

  it("answers 1,000 concurrent distinct queries with a handful of upstream requests, coalescing duplicates", async function () {
    // The head is asked once: with the default 1 s, a slow machine would ask again between batches.
    const { reader: evm, counts } = reader([anvil.rpcUrl], {}, 60_000);
    const owners = Array.from({ length: 1_000 }, () => getAddress(hexlify(randomBytes(20))));
    const results = await Promise.all([
      ...owners.map((owner) => evm.balanceOf(erc20, owner)),
      ...Array.from({ length: 50 }, () => evm.balanceOf(erc20, holder)),
    ]);
    expect(results.slice(0, 1_000).every((result) => result.balance === 0n)).to.equal(true);
    expect(results.slice(1_000).every((result) => result.balance === ABOVE_2_53)).to.equal(true);
    // One block-number request, then 1,001 distinct queries in batches of 500.
    expect(counts.ok).to.equal(4);
    expect(counts.error).to.equal(0);
  });

  it("sends a trickle of queries (one every millisecond) as one upstream request per batch window, not one per query", async function () {
    const { reader: evm, counts } = reader([anvil.rpcUrl], {}, 60_000);
    await evm.latestBlock(); // the head is known: every request counted below is an aggregate3
    const before = counts.ok;
    const started = performance.now();
    const pending: Array<Promise<unknown>> = [];
    for (let index = 0; index < 100; index += 1) {
      pending.push(evm.balanceOf(erc20, getAddress(hexlify(randomBytes(20)))));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(pending);
    const elapsedMs = performance.now() - started;
    // anvil answers an aggregate3 within a few milliseconds, so without the window every query that
    // arrives while none is waiting would go out alone; with it, one request per 10 ms window at most.
    expect(counts.ok - before).to.be.at.most(Math.ceil(elapsedMs / 10) + 1);
    expect(counts.ok - before).to.be.below(50);
  });

  describe("ERC-1155 (a token id)", function () {
    const word = (value: bigint) => `0x${value.toString(16).padStart(64, "0")}`;
    const failure = (promise: Promise<unknown>) => promise.catch((error: unknown) => error);

    it("reads balanceOf(owner, id): an id and an amount above 2^53 exactly, id 0, and an unheld id as 0", async function () {
      const { reader: evm } = reader([anvil.rpcUrl]);
      const big = await evm.balanceOf(erc1155, holder, undefined, ID_ABOVE_2_53);
      expect(big.balance).to.equal(ABOVE_2_53);
      expect(big.queryResult).to.equal(word(ABOVE_2_53));
      expect(big.blockNumber).to.equal(BigInt(await provider.getBlockNumber()));
      expect((await evm.balanceOf(erc1155, holder, undefined, ID_ZERO)).balance).to.equal(5n);
      expect((await evm.balanceOf(erc1155, holder, undefined, ID_SMALL)).balance).to.equal(11n);
      const unheld = await evm.balanceOf(erc1155, holder, undefined, ID_ABOVE_2_53 + 1n);
      expect([unheld.balance, unheld.queryResult]).to.deep.equal([0n, word(0n)]);
      expect((await evm.balanceOf(erc1155, nobody, undefined, ID_SMALL)).balance).to.equal(0n);
      expect((await evm.balanceOf(erc1155, holder, undefined, MAX_UINT256)).balance).to.equal(0n);
    });

    it("reports an ERC-20 or ERC-721 asked with an id as not found, and an ERC-1155 asked without one as needing an id", async function () {
      const { reader: evm } = reader([anvil.rpcUrl]);
      const erc20WithId = await failure(evm.balanceOf(erc20, holder, undefined, ID_SMALL));
      expect(erc20WithId).to.be.instanceOf(AssetNotFoundError);
      expect((erc20WithId as Error).message).to.equal(`no ERC-1155 contract at ${erc20.toLowerCase()}`);
      expect(await failure(evm.balanceOf(erc721, holder, undefined, 1n))).to.be.instanceOf(AssetNotFoundError);
      expect(await failure(evm.balanceOf(nobody, holder, undefined, 1n))).to.be.instanceOf(AssetNotFoundError);
      // An ERC-1155 asked without an id says so (ERC-165), still an AssetNotFoundError for the node.
      const erc1155WithoutId = await failure(evm.balanceOf(erc1155, holder));
      expect(erc1155WithoutId).to.be.instanceOf(TokenIdRequiredError);
      expect(erc1155WithoutId).to.be.instanceOf(AssetNotFoundError);
      expect((erc1155WithoutId as Error).message).to.equal(
        `${erc1155.toLowerCase()} is an ERC-1155 contract: a balance there needs a token id`,
      );
      // An address that answers no ERC-165 (no code at all) stays plainly not found.
      const noContract = await failure(evm.balanceOf(nobody, holder));
      expect(noContract).to.be.instanceOf(AssetNotFoundError);
      expect(noContract).not.to.be.instanceOf(TokenIdRequiredError);
    });

    it("refuses an id outside uint256 with a TypeError, before anything is queued or asked", async function () {
      const { reader: evm, counts } = reader([anvil.rpcUrl]);
      expect(() => evm.balanceOf(erc1155, holder, undefined, -1n)).to.throw(TypeError, /uint256/);
      expect(() => evm.balanceOf(erc1155, holder, undefined, MAX_UINT256 + 1n)).to.throw(TypeError, /uint256/);
      expect(() => evm.balanceOf(erc1155, holder, undefined, 1 as unknown as bigint)).to.throw(TypeError);
      expect(counts.ok + counts.error).to.equal(0);
    });

    it("sends a burst mixing ERC-20, ERC-721 and ERC-1155 queries as one aggregate3, each answered by its own selector", async function () {
      const { reader: evm, counts } = reader([anvil.rpcUrl], {}, 60_000);
      await evm.latestBlock(); // the head is known: every request counted below is an aggregate3
      const before = counts.ok;
      const owners = Array.from({ length: 20 }, () => getAddress(hexlify(randomBytes(20))));
      const [fungible, nft, big, zero, same, withoutIdDuplicate, ...rest] = await Promise.all([
        evm.balanceOf(erc20, holder),
        evm.balanceOf(erc721, holder),
        evm.balanceOf(erc1155, holder, undefined, ID_ABOVE_2_53),
        evm.balanceOf(erc1155, holder, undefined, ID_ZERO),
        evm.balanceOf(erc1155, holder, undefined, ID_ABOVE_2_53), // the same query in flight: shared
        evm.balanceOf(erc20, holder), // likewise
        ...owners.flatMap((owner) => [evm.balanceOf(erc20, owner), evm.balanceOf(erc1155, owner, undefined, ID_SMALL)]),
      ]);
      expect([fungible.balance, nft.balance, big.balance, zero.balance]).to.deep.equal([ABOVE_2_53, 3n, ABOVE_2_53, 5n]);
      expect(same, "one read, one answer object").to.equal(big);
      expect(withoutIdDuplicate).to.equal(fungible);
      expect(rest.every((result) => result.balance === 0n)).to.equal(true);
      expect(new Set([fungible, big, ...rest].map((result) => result.blockNumber)).size).to.equal(1);
      expect(counts.ok - before, "one eth_call for the whole burst").to.equal(1);
      expect(counts.error).to.equal(0);
    });

    it("keeps queries apart that differ only in the id, or in having one", async function () {
      const { reader: evm } = reader([anvil.rpcUrl]);
      const [zero, small, withoutId] = await Promise.all([
        evm.balanceOf(erc1155, holder, undefined, ID_ZERO),
        evm.balanceOf(erc1155, holder, undefined, ID_SMALL),
        failure(evm.balanceOf(erc1155, holder)),
      ]);
      expect([zero.balance, small.balance]).to.deep.equal([5n, 11n]);
      expect(withoutId).to.be.instanceOf(AssetNotFoundError);
    });

    it("reads an id pinned to a block: before and after a transfer, beside an unpinned query", async function () {
      const artifact = await hre.artifacts.readArtifact("PlainERC1155");
      const deployed = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(
        deployer.address,
        [ID_ABOVE_2_53],
        [100n],
      );
      await deployed.waitForDeployment();
      const token = new Contract(await deployed.getAddress(), artifact.abi, deployer);
      const receiver = getAddress(hexlify(randomBytes(20)));
      const before = BigInt(await provider.getBlockNumber());
      await (await token.getFunction("safeTransferFrom")(deployer.address, receiver, ID_ABOVE_2_53, 30n, "0x")).wait();
      const after = BigInt(await provider.getBlockNumber());
      const { reader: evm } = reader([anvil.rpcUrl]);
      const asset = await token.getAddress();
      const [pinnedBefore, pinnedAfter, latest] = await Promise.all([
        evm.balanceOf(asset, receiver, before, ID_ABOVE_2_53),
        evm.balanceOf(asset, receiver, after, ID_ABOVE_2_53),
        evm.balanceOf(asset, deployer.address, undefined, ID_ABOVE_2_53),
      ]);
      expect([pinnedBefore.balance, pinnedBefore.blockNumber]).to.deep.equal([0n, before]);
      expect([pinnedAfter.balance, pinnedAfter.blockNumber]).to.deep.equal([30n, after]);
      expect(latest.balance).to.equal(70n);
      // Before the token existed there was no code: not found, as for any asset.
      expect(await failure(evm.balanceOf(asset, receiver, before - 1n, ID_ABOVE_2_53))).to.be.instanceOf(AssetNotFoundError);
    });
  });

  it("fails over from an upstream that is down, slow or answers garbage", async function () {
    const slow = await fakeUpstream(() => undefined); // never answers
    const garbage = await fakeUpstream((_request, response) => response.writeHead(200).end("<html>not json</html>"));
    try {
      for (const bad of ["http://127.0.0.1:9/key/SECRET", slow.url, garbage.url]) {
        const { reader: evm, counts } = reader([bad, anvil.rpcUrl]);
        const started = Date.now();
        expect((await evm.balanceOf(erc20, holder)).balance).to.equal(ABOVE_2_53);
        expect(Date.now() - started).to.be.lessThan(2_000);
        expect(counts.error).to.equal(1); // the bad one, once: it is then cooled down
      }
    } finally {
      slow.server.closeAllConnections();
      slow.server.close();
      garbage.server.close();
    }
  });

  it("gives up with a clear error, naming no URL, when every upstream stays down", async function () {
    const slow = await fakeUpstream(() => undefined);
    try {
      const { reader: evm } = reader(["http://127.0.0.1:9/key/SECRET", slow.url], { timeoutMs: 300, maxAttempts: 3 });
      const started = Date.now();
      const error = (await evm.balanceOf(erc20, holder).catch((reason: unknown) => reason)) as Error;
      expect(error).to.be.instanceOf(UpstreamUnavailableError);
      expect(Date.now() - started).to.be.lessThan(3 * 300 + 500);
      const text = `${error.message} ${String((error.cause as Error)?.message)}`;
      expect(text).to.not.include("SECRET");
      expect(text).to.not.include("127.0.0.1");
    } finally {
      slow.server.closeAllConnections();
      slow.server.close();
    }
  });
});
