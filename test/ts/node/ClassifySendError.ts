import { expect } from "chai";
import { JsonRpcProvider, parseUnits, toQuantity, Wallet, type JsonRpcError, type JsonRpcPayload } from "ethers";

import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { devnetProvider } from "../../../src/devnet/op-devnet.ts";
import { classifySendError, type SendErrorKind } from "../../../src/node/classify-send-error.ts";

// A JSON-RPC error turned into what ethers throws from `broadcastTransaction`, by ethers itself.
const offline = new JsonRpcProvider("http://127.0.0.1:9", 1, { staticNetwork: true });
const payload: JsonRpcPayload = { id: 1, jsonrpc: "2.0", method: "eth_sendRawTransaction", params: ["0x02f86a"] };
function sendFailure(code: number, message: string, data?: string): Error {
  const error: JsonRpcError = { id: 1, error: { code, message, ...(data === undefined ? {} : { data }) } };
  return offline.getRpcError(payload, error);
}

const ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

// The texts as the nodes write them: go-ethereum's core/error.go and core/txpool/errors.go (op-geth
// keeps them), its RPC's fee cap (internal/ethapi), and anvil's crates/anvil/src/eth/error.rs.
const CASES: Array<[string, SendErrorKind, number, string]> = [
  ["geth", "nonce-too-low", -32000, `nonce too low: address ${ADDRESS}, tx: 5 state: 7`],
  ["geth", "nonce-too-high", -32000, `nonce too high: address ${ADDRESS}, tx: 9 state: 7`],
  ["geth", "insufficient-funds", -32000, `insufficient funds for gas * price + value: address ${ADDRESS} have 0 want 21000000000000`],
  ["geth", "insufficient-funds", -32000, `insufficient funds for transfer: address ${ADDRESS}`],
  ["geth", "replacement-underpriced", -32000, "replacement transaction underpriced"],
  ["geth", "underpriced", -32000, "transaction underpriced: tip needed 1000000, tip permitted 1"],
  ["geth", "already-known", -32000, "already known"],
  [
    "geth",
    "fee-cap-below-base-fee",
    -32000,
    `max fee per gas less than block base fee: address ${ADDRESS}, maxFeePerGas: 1000000 baseFee: 2000000`,
  ],
  ["geth", "gas-limit-too-high", -32000, "exceeds block gas limit"],
  ["geth", "gas-limit-too-high", -32000, "gas limit reached"],
  ["geth", "intrinsic-gas", -32000, "intrinsic gas too low: have 20000, want 21000"],
  ["geth", "invalid", -32000, "oversized data: transaction size 200000, limit 131072"],
  ["geth", "invalid", -32000, "tx fee (1.20 ether) exceeds the configured cap (1.00 ether)"],
  [
    "geth",
    "invalid",
    -32000,
    `max priority fee per gas higher than max fee per gas: address ${ADDRESS}, maxPriorityFeePerGas: 2, maxFeePerGas: 1`,
  ],
  ["geth", "invalid", -32000, "transaction type not supported"],
  ["geth", "rpc-unavailable", -32000, "txpool is full"],
  ["geth", "execution-reverted", 3, "execution reverted"],
  ["anvil", "nonce-too-low", -32003, "nonce too low"],
  ["anvil", "nonce-too-high", -32003, "Nonce too high"],
  ["anvil", "insufficient-funds", -32003, "Insufficient funds for gas * price + value"],
  ["anvil", "fee-cap-below-base-fee", -32003, "max fee per gas less than block base fee"],
  ["anvil", "intrinsic-gas", -32003, "intrinsic gas too low"],
  ["anvil", "gas-limit-too-high", -32003, "intrinsic gas too high -- tx.gas_limit > env.block.gas_limit"],
  ["anvil", "gas-limit-too-high", -32003, "Transaction gas limit is greater than the block gas limit, gas_limit: 100000000, cap: 30000000"],
  [
    "anvil",
    "replacement-underpriced",
    -32003,
    "Tx: [0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060] insufficient gas price to replace existing transaction",
  ],
  ["anvil", "already-known", -32003, "Tx: [0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060] already Imported"],
  ["anvil", "invalid", -32003, "max priority fee per gas higher than max fee per gas"],
  ["any", "rpc-unavailable", -32005, "request limit exceeded"],
  ["any", "rpc-unavailable", 429, "Too Many Requests"],
  ["any", "unknown", -32000, "something nobody wrote down"],
];

describe("circuit node: what a failed send means (classifySendError)", function () {
  after(() => offline.destroy());

  for (const [node, kind, code, message] of CASES) {
    it(`${node}: "${message.slice(0, 60)}" is ${kind}`, function () {
      expect(classifySendError(sendFailure(code, message)).kind).to.equal(kind);
    });
  }

  it("trusts ethers' codes first: what ethers calls INSUFFICIENT_FUNDS is, whatever the node's text", function () {
    // ethers reads this (OpenEthereum's) text as insufficient funds; no text pattern here names it.
    const error = sendFailure(-32000, "base fee exceeds gas limit");
    expect((error as { code?: string }).code).to.equal("INSUFFICIENT_FUNDS");
    expect(classifySendError(error).kind).to.equal("insufficient-funds");
  });

  it("keeps URLs out of the message it returns", function () {
    const failure = classifySendError(sendFailure(-32000, "upstream https://rpc.example/v2/SECRETKEY failed"));
    expect(failure.message).to.not.include("SECRETKEY");
  });

  it("calls an RPC that does not answer unavailable (a refused connection, a timeout)", async function () {
    const refused = new JsonRpcProvider("http://127.0.0.1:9", 1, { staticNetwork: true });
    const error = await refused.broadcastTransaction("0x02f86a").catch((thrown: unknown) => thrown);
    refused.destroy();
    expect(classifySendError(error).kind).to.equal("rpc-unavailable");
    // What ethers' fetch layer throws when the RPC does not answer in time.
    const timeout = Object.assign(new Error("request timeout (code=TIMEOUT, version=6)"), {
      code: "TIMEOUT",
      shortMessage: "request timeout",
    });
    expect(classifySendError(timeout).kind).to.equal("rpc-unavailable");
  });

  describe("against a real anvil", function () {
    this.timeout(60_000);
    let anvil: AnvilInstance;
    let provider: JsonRpcProvider;
    let wallet: Wallet;
    const chainId = 31_337n;
    const failure = (raw: string) =>
      provider.broadcastTransaction(raw).then(
        () => expect.fail("accepted"),
        (error: unknown) => classifySendError(error).kind,
      );
    const sign = async (fields: {
      nonce?: number;
      value?: bigint;
      gasLimit?: bigint;
      maxFeePerGas?: bigint;
      maxPriorityFeePerGas?: bigint;
    }) => {
      const fees = await provider.getFeeData();
      return wallet.signTransaction({
        type: 2,
        chainId,
        to: ADDRESS,
        value: fields.value ?? 1n,
        nonce: fields.nonce ?? (await provider.getTransactionCount(wallet.address, "pending")),
        gasLimit: fields.gasLimit ?? 21_000n,
        maxFeePerGas: fields.maxFeePerGas ?? fees.maxFeePerGas!,
        maxPriorityFeePerGas: fields.maxPriorityFeePerGas ?? fees.maxPriorityFeePerGas!,
      });
    };

    before(async function () {
      anvil = await startAnvil({ chainId: Number(chainId) });
      provider = devnetProvider(anvil.rpcUrl, Number(chainId));
      wallet = new Wallet(Wallet.createRandom().privateKey, provider);
      await provider.send("anvil_setBalance", [wallet.address, "0x56BC75E2D63100000"]);
    });
    after(async function () {
      provider?.destroy();
      await anvil?.stop();
    });

    it("reads its refusals as the kinds the sender acts on", async function () {
      await (await wallet.sendTransaction({ to: ADDRESS, value: 1n })).wait();
      expect(await failure(await sign({ nonce: 0 }))).to.equal("nonce-too-low");
      expect(await failure(await sign({ gasLimit: 20_000n }))).to.equal("intrinsic-gas");
      expect(await failure(await sign({ gasLimit: 100_000_000n }))).to.equal("gas-limit-too-high");
      const poor = new Wallet(Wallet.createRandom().privateKey, provider);
      const fees = await provider.getFeeData();
      const unpaid = await poor.signTransaction({
        type: 2,
        chainId,
        to: ADDRESS,
        nonce: 0,
        gasLimit: 21_000n,
        maxFeePerGas: fees.maxFeePerGas!,
        maxPriorityFeePerGas: 1n,
      });
      expect(await failure(unpaid)).to.equal("insufficient-funds");
      const baseFee = parseUnits("100", "gwei");
      await provider.send("anvil_setNextBlockBaseFeePerGas", [toQuantity(baseFee)]);
      expect(await failure(await sign({ maxFeePerGas: baseFee / 2n, maxPriorityFeePerGas: 1n }))).to.equal("fee-cap-below-base-fee");
      await provider.send("evm_mine", []); // the raised base fee is now the latest block's, as getFeeData reads it
    });

    it("reads a pending nonce's underpriced replacement and a duplicate as such", async function () {
      await provider.send("evm_setAutomine", [false]);
      try {
        const first = await sign({});
        await provider.broadcastTransaction(first);
        expect(await failure(first)).to.equal("already-known");
        const nonce = await provider.getTransactionCount(wallet.address, "latest");
        const fees = await provider.getFeeData();
        // Another transaction for the pending nonce, at fees no higher: a replacement the pool refuses.
        const sameFees = await sign({
          nonce,
          value: 2n,
          maxFeePerGas: fees.maxFeePerGas!,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas!,
        });
        expect(await failure(sameFees)).to.equal("replacement-underpriced");
      } finally {
        await provider.send("evm_setAutomine", [true]);
      }
    });
  });
});
