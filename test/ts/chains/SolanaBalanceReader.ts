import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

import { generateKeyPairSigner, getAddressEncoder, type Address } from "@solana/kit";
import { expect } from "chai";

import { SolanaBalanceReader } from "../../../src/chains/solana/balance-reader.ts";
import { createFailoverTransport } from "../../../src/chains/solana/failover-transport.ts";
import { AssetNotFoundError, UpstreamUnavailableError } from "../../../src/chains/rpc/errors.ts";
import { startSolanaRpcServer, type SolanaRpcServer } from "../../../src/devnet/solana/litesvm-rpc-server.ts";
import { SolanaTokenLedger } from "../../../src/devnet/solana/token-ledger.ts";

const AMOUNT_OFFSET = 64;

function amountOf(hex: string, accountIndex: number, size = 165): bigint {
  const bytes = Buffer.from(hex.slice(accountIndex * size * 2, (accountIndex + 1) * size * 2), "hex");
  return bytes.readBigUInt64LE(AMOUNT_OFFSET);
}

describe("source adapter: Solana token balances (LiteSVM endpoint, real SPL Token and Token-2022 programs)", function () {
  this.timeout(60_000);
  let ledger: SolanaTokenLedger;
  let rpc: SolanaRpcServer;
  const fixture = {} as Record<"owner" | "splMint" | "t22Mint" | "nftMint" | "nftOwner", Address> & { ata: Address; extra: Address };

  before(async function () {
    ledger = await SolanaTokenLedger.create();
    rpc = await startSolanaRpcServer(ledger);
    const owner = await ledger.newWallet();
    fixture.owner = owner.address;
    // SPL: two accounts of one owner (the associated one and another), tokens moved between them.
    fixture.splMint = await ledger.createMint("spl", 6);
    fixture.ata = await ledger.associatedAccount(owner.address, fixture.splMint);
    fixture.extra = await ledger.extraAccount(owner.address, fixture.splMint);
    await ledger.mintTo(fixture.splMint, fixture.ata, 5_000_000n);
    await ledger.mintTo(fixture.splMint, fixture.extra, 2_500_000n);
    await ledger.transfer(owner, fixture.splMint, fixture.ata, fixture.extra, 1_000_000n);
    // Token-2022: a balance above 2^53.
    fixture.t22Mint = await ledger.createMint("token-2022", 9);
    await ledger.mintTo(fixture.t22Mint, await ledger.associatedAccount(owner.address, fixture.t22Mint), 2n ** 53n + 7n);
    // An NFT held by another owner.
    fixture.nftOwner = (await ledger.newWallet()).address;
    fixture.nftMint = (await ledger.createNft(fixture.nftOwner)).mint;
  });
  after(async function () {
    await rpc?.close();
  });

  const reader = (urls = [rpc.url], timeoutMs = 1_000) =>
    new SolanaBalanceReader(createFailoverTransport({ urls, timeoutMs, backoffMs: 10 }));

  it("the endpoint's owner index follows the ledger: a new account, a mint and a transfer each show in the next read", async function () {
    const holder = await ledger.newWallet();
    const read = () => reader().balancesOf(holder.address, [fixture.splMint, fixture.t22Mint]);
    const amounts = async () => [...(await read()).values()].map((balance) => balance.balance);
    expect(await amounts()).to.deep.equal([0n, 0n]);
    const account = await ledger.associatedAccount(holder.address, fixture.splMint);
    await ledger.mintTo(fixture.splMint, account, 40n);
    expect(await amounts()).to.deep.equal([40n, 0n]);
    const other = await ledger.associatedAccount((await ledger.newWallet()).address, fixture.splMint);
    await ledger.transfer(holder, fixture.splMint, account, other, 15n);
    expect(await amounts()).to.deep.equal([25n, 0n]);
    // Reads while the ledger stands still answer alike, from one scan of each program.
    expect(await amounts()).to.deep.equal([25n, 0n]);
  });

  it("sums an owner's two token accounts and returns their raw data in account-address order", async function () {
    const result = await reader().balanceOf(fixture.owner, fixture.splMint);
    expect(result.balance).to.equal(7_500_000n);
    expect(result.queryResult).to.match(/^[0-9a-f]{660}$/); // two 165-byte SPL accounts
    const encoder = getAddressEncoder();
    const [first, second] = [fixture.ata, fixture.extra].sort((a, b) =>
      Buffer.compare(Buffer.from(encoder.encode(a)), Buffer.from(encoder.encode(b))),
    );
    const expected = { [fixture.ata]: 4_000_000n, [fixture.extra]: 3_500_000n };
    expect(amountOf(result.queryResult, 0)).to.equal(expected[first]);
    expect(amountOf(result.queryResult, 1)).to.equal(expected[second]);
    // Each account's data starts with the mint and the owner.
    const data = Buffer.from(result.queryResult.slice(0, 330), "hex");
    expect(data.subarray(0, 32)).to.deep.equal(Buffer.from(encoder.encode(fixture.splMint)));
    expect(data.subarray(32, 64)).to.deep.equal(Buffer.from(encoder.encode(fixture.owner)));
  });

  it("reads a Token-2022 balance above 2^53 exactly, with the longer Token-2022 account data", async function () {
    const result = await reader().balanceOf(fixture.owner, fixture.t22Mint);
    expect(result.balance).to.equal(2n ** 53n + 7n);
    expect(result.queryResult.length / 2).to.equal(170); // 165 bytes + account type + ImmutableOwner extension
  });

  it("counts an NFT (supply 1, decimals 0) for its holder and zero for anyone else", async function () {
    expect((await reader().balanceOf(fixture.nftOwner, fixture.nftMint)).balance).to.equal(1n);
    const empty = await reader().balanceOf(fixture.owner, fixture.nftMint);
    expect(empty).to.deep.include({ balance: 0n, queryResult: "" });
  });

  it("reports a mint address with no account, or an account that is not a mint, as not found", async function () {
    const nowhere = (await generateKeyPairSigner()).address;
    const slot = await reader().currentSlotUncached();
    // Without a lower bound the accounts are read after the mint; with one, at once: the mint decides either way.
    for (const options of [{}, { minContextSlot: slot }]) {
      expect(
        await reader()
          .balanceOf(fixture.owner, nowhere, options)
          .catch((error: unknown) => error),
      ).to.be.instanceOf(AssetNotFoundError);
      expect(
        await reader()
          .balanceOf(fixture.owner, fixture.owner, options)
          .catch((error: unknown) => error),
      ).to.be.instanceOf(AssetNotFoundError);
    }
  });

  it("reports a token account or multisig-shaped account as not found, whatever its byte 45 holds", async function () {
    // A real token account, and a copy of it whose byte 45 (inside the owner key) is 1: the spot where a
    // mint keeps its "initialized" flag. Neither is a mint.
    expect(
      await reader()
        .balanceOf(fixture.owner, fixture.ata)
        .catch((error: unknown) => error),
    ).to.be.instanceOf(AssetNotFoundError);
    const tokenAccount = ledger.svm.getAccount(fixture.ata);
    if (!tokenAccount.exists) throw new Error("the fixture's token account is missing");
    const data = Uint8Array.from(tokenAccount.data);
    data[45] = 1;
    const lookalike = (await generateKeyPairSigner()).address;
    ledger.setAccount({ ...tokenAccount, address: lookalike, data });
    expect(
      await reader()
        .balanceOf(fixture.owner, lookalike)
        .catch((error: unknown) => error),
    ).to.be.instanceOf(AssetNotFoundError);
  });

  it("fails over from an upstream that answers with an error about its own state (unhealthy, behind)", async function () {
    let answered = 0;
    const unhealthy = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        answered += 1;
        const { id } = JSON.parse(body) as { id: unknown };
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32005, message: "Node is unhealthy" } }));
      });
    });
    await new Promise<void>((resolve) => unhealthy.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(unhealthy.address() as AddressInfo).port}/SECRET`;
      const result = await reader([url, rpc.url]).balanceOf(fixture.owner, fixture.splMint);
      expect(result.balance).to.equal(7_500_000n);
      expect(answered).to.equal(1); // asked once, then cooled down
    } finally {
      unhealthy.close();
    }
  });

  it("reads many mints of one owner at once, each answer what balanceOf gives, a missing mint not found", async function () {
    const solana = reader();
    const slot = await solana.currentSlotUncached();
    const mints = [fixture.splMint, fixture.t22Mint, fixture.nftMint, fixture.splMint];
    const calls = () => ["getMultipleAccounts", "getTokenAccountsByOwner", "getAccountInfo"].map((method) => rpc.calls.get(method) ?? 0);
    const before = calls();
    const batch = await solana.balancesOf(fixture.owner, mints, { minContextSlot: slot });
    // One getMultipleAccounts for the mints, one getTokenAccountsByOwner per distinct mint (by mint: never
    // the owner's other tokens), no getAccountInfo.
    expect(calls().map((count, index) => count - before[index])).to.deep.equal([1, 3, 0]);
    expect([...batch.keys()]).to.deep.equal([fixture.splMint, fixture.t22Mint, fixture.nftMint]);
    for (const mint of batch.keys()) {
      const alone = await solana.balanceOf(fixture.owner, mint, { minContextSlot: slot });
      expect(batch.get(mint), mint).to.deep.equal(alone);
    }
    expect(batch.get(fixture.t22Mint)!.balance).to.equal(2n ** 53n + 7n);
    expect(batch.get(fixture.nftMint)).to.include({ balance: 0n, queryResult: "" });
    // The NFT's holder: its one account, read among the program's accounts of every mint.
    const holder = await solana.balancesOf(fixture.nftOwner, [fixture.nftMint, fixture.splMint], { minContextSlot: slot });
    expect(holder.get(fixture.nftMint)!.balance).to.equal(1n);
    expect(holder.get(fixture.nftMint)).to.deep.equal(await solana.balanceOf(fixture.nftOwner, fixture.nftMint));
    const nowhere = (await generateKeyPairSigner()).address;
    for (const missing of [nowhere, fixture.owner])
      expect(
        await solana.balancesOf(fixture.owner, [fixture.splMint, missing], { minContextSlot: slot }).catch((error: unknown) => error),
      ).to.be.instanceOf(AssetNotFoundError);
  });

  it("shares one read between identical queries in flight", async function () {
    const before = rpc.calls.get("getTokenAccountsByOwner") ?? 0;
    const solana = reader();
    const results = await Promise.all(Array.from({ length: 10 }, () => solana.balanceOf(fixture.owner, fixture.splMint)));
    expect(new Set(results.map((result) => result.balance))).to.deep.equal(new Set([7_500_000n]));
    expect((rpc.calls.get("getTokenAccountsByOwner") ?? 0) - before).to.equal(1);
  });

  it("fails over from a dead or hanging upstream, and gives up with a clear error naming no URL", async function () {
    const hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/SECRET`;
    try {
      const result = await reader(["http://127.0.0.1:9/SECRET", hangingUrl, rpc.url], 300).balanceOf(fixture.owner, fixture.splMint);
      expect(result.balance).to.equal(7_500_000n);
      const error = (await reader(["http://127.0.0.1:9/SECRET", hangingUrl], 300)
        .balanceOf(fixture.owner, fixture.splMint)
        .catch((reason: unknown) => reason)) as Error;
      expect(error).to.be.instanceOf(UpstreamUnavailableError);
      expect(`${error.message} ${String((error.cause as Error)?.message)}`).to.not.match(/SECRET|127\.0\.0\.1/);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });
});
