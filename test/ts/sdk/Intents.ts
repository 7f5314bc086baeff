import { expect } from "chai";
import { type Contract, MaxUint256, type Signer, Wallet } from "ethers";
import hre from "hardhat";
import { type Abi, type AbiParameter, type Address, createPublicClient, createWalletClient, custom, erc20Abi, type Hex } from "viem";
import { mnemonicToAccount } from "viem/accounts";
import { getTransactionCount, readContract, waitForTransactionReceipt, writeContract } from "viem/actions";

import {
  AvnError,
  decodeOriginData,
  destinationSettlerAbi,
  DEFAULT_FILL_PERIOD_SECONDS,
  gaslessOrderStruct,
  InvalidArgumentError,
  NATIVE_TOKEN,
  openOrder,
  orderIdOf,
  orderStatus,
  originSettlerAbi,
  PERMIT2_ADDRESS,
  signGaslessOrder,
  type GaslessOrder,
  type OpenOrderOptions,
  type OrderTerms,
} from "../../../packages/sdk/src/index.ts";
import { SETTLEMENT_WINDOW, settlersFixture, type SettlersFixture } from "../intents/settlers-fixture.ts";

const UNIT = 10n ** 18n;
/** Hardhat's development accounts: account 1 is the fixture's `signers[1]`, the user here. */
const MNEMONIC = "test test test test test test test test test test test junk";

/** An ABI item as one line, names and `indexed` included (no `internalType`): how the SDK's ABI and an artifact's are compared. */
function signatureOf(item: Abi[number]): string {
  const parameter = (p: AbiParameter & { indexed?: boolean }): string => {
    const components = "components" in p ? p.components : undefined;
    const type = components === undefined ? p.type : `(${components.map(parameter).join(",")})${p.type.slice("tuple".length)}`;
    return `${type}${p.indexed === true ? " indexed" : ""} ${p.name ?? ""}`.trim();
  };
  const inputs = "inputs" in item ? item.inputs.map(parameter).join(",") : "";
  const outputs = "outputs" in item ? ` returns (${item.outputs.map(parameter).join(",")})` : "";
  const mutability = "stateMutability" in item ? ` ${item.stateMutability}` : "";
  const name = "name" in item ? item.name : "";
  return `${item.type} ${name}(${inputs})${mutability}${outputs}`;
}

describe("@avn/sdk intents: fast withdrawals opened from a default viem client, followed to L1 and back", function () {
  this.timeout(300_000);
  let f: SettlersFixture;
  let filler: Signer;
  let recipient: Address;
  let user: ReturnType<typeof mnemonicToAccount>;

  /** viem over the fixture's in-process chain (its ethers provider's `send`). No retries: viem would retry reverts with backoff. */
  const transportOf = (override?: (method: string) => unknown) =>
    custom(
      {
        request: async ({ method, params }: { method: string; params?: unknown }) =>
          override?.(method) ?? f.provider.send(method, (params ?? []) as unknown[]),
      },
      { retryCount: 0 },
    );
  let publicClient: ReturnType<typeof createPublicClient>;
  /** A default wallet client: a local account, no chain, no gas, fee or nonce given anywhere. */
  let wallet: ReturnType<typeof createWalletClient<ReturnType<typeof transportOf>, undefined, typeof user>>;

  const settler = () => f.origin.target as Address;
  const terms = (overrides: Partial<OrderTerms> = {}): OrderTerms => ({
    inputToken: f.inputToken.target as Address,
    inputAmount: 100n * UNIT,
    outputToken: f.outputToken.target as Address,
    outputAmount: 99n * UNIT,
    recipient,
    destinationChainId: f.chainId,
    ...overrides,
  });
  const ethTerms = (overrides: Partial<OrderTerms> = {}) =>
    terms({ inputToken: NATIVE_TOKEN, outputToken: NATIVE_TOKEN, inputAmount: UNIT, outputAmount: (UNIT * 99n) / 100n, ...overrides });
  const nonceOfUser = () => getTransactionCount(publicClient, { address: user.address });
  const allowanceOfUser = () =>
    readContract(publicClient, {
      address: f.inputToken.target as Address,
      abi: erc20Abi,
      functionName: "allowance",
      args: [user.address, settler()],
    });
  const approveFromUser = async (spender: Address, amount: bigint) => {
    const hash = await writeContract(wallet, {
      address: f.inputToken.target as Address,
      abi: erc20Abi,
      functionName: "approve",
      args: [spender, amount],
      chain: null,
    });
    await waitForTransactionReceipt(publicClient, { hash });
  };

  /** The `Open` event of a transaction, as the contract's own ABI (through ethers) reads it. */
  async function openEventOf(transactionHash: Hex) {
    const receipt = (await f.provider.getTransactionReceipt(transactionHash))!;
    const events = receipt.logs.map((log) => f.origin.interface.parseLog(log)).filter((event) => event?.name === "Open");
    expect(events).to.have.length(1);
    return { event: events[0]!, receipt };
  }

  /** The filler pays the order's output on the destination (the same chain here). */
  async function fillOnDestination(orderId: Hex, originData: Hex) {
    await (await (f.outputToken.connect(filler) as Contract).approve(f.destination.target, MaxUint256)).wait();
    const value = decodeOriginData(originData).outputToken === NATIVE_TOKEN ? decodeOriginData(originData).outputAmount : 0n;
    return (await (await (f.destination.connect(filler) as Contract).fill(orderId, originData, "0x", { value })).wait())!;
  }

  before(async function () {
    f = await settlersFixture();
    filler = f.signers[2];
    recipient = Wallet.createRandom().address as Address;
    user = mnemonicToAccount(MNEMONIC, { addressIndex: 1 });
    expect(user.address).to.equal(await f.signers[1].getAddress());
    publicClient = createPublicClient({ transport: transportOf(), pollingInterval: 50 });
    wallet = createWalletClient({ account: user, transport: transportOf(), pollingInterval: 50 });
    await (await f.inputToken.transfer(user.address, 10_000n * UNIT)).wait();
    await (await f.outputToken.transfer(await filler.getAddress(), 10_000n * UNIT)).wait();
  });

  it("calls the settlers with ABI fragments that are the compiled interfaces', names included", async function () {
    const cases: Array<[Abi, string[]]> = [
      // The interface first: the contract leaves some parameters unnamed (`openFor`'s `originFillerData`).
      [originSettlerAbi, ["IIntentOriginSettler", "OriginSettler"]],
      [destinationSettlerAbi, ["IIntentDestinationSettler"]],
    ];
    for (const [abi, artifacts] of cases) {
      const compiled = new Map<string, string>();
      for (const artifact of artifacts)
        for (const item of (await hre.artifacts.readArtifact(artifact)).abi as Abi)
          if ("name" in item && !compiled.has(`${item.type} ${item.name}`)) compiled.set(`${item.type} ${item.name}`, signatureOf(item));
      for (const item of abi) {
        const key = `${item.type} ${"name" in item ? item.name : ""}`;
        expect(signatureOf(item), key).to.equal(compiled.get(key));
      }
    }
  });

  it("opens an ETH order with the input as value, reads the id from the Open event, and reports it open", async function () {
    const before = await nonceOfUser();
    const escrowBefore = await f.provider.getBalance(settler());
    const opened = await openOrder(wallet, publicClient, { originSettler: settler(), terms: ethTerms() });
    expect(opened).to.not.have.property("approvalTransactionHash");
    expect(await nonceOfUser()).to.equal(before + 1);
    expect(await f.provider.getBalance(settler())).to.equal(escrowBefore + UNIT);

    const { event, receipt } = await openEventOf(opened.transactionHash);
    expect(opened.orderId).to.equal(event.args.orderId);
    expect(opened.originData).to.equal(event.args.resolvedOrder.fillInstructions[0].originData);
    expect(orderIdOf(opened.originData)).to.equal(opened.orderId);
    // The default deadline: the latest block's time when it was checked (the block before) plus 10 minutes.
    const previous = (await f.provider.getBlock(receipt.blockNumber - 1))!;
    expect(DEFAULT_FILL_PERIOD_SECONDS).to.equal(600);
    expect(await f.origin.MAX_FILL_PERIOD()).to.be.at.least(BigInt(DEFAULT_FILL_PERIOD_SECONDS));
    expect(opened.fillDeadline).to.equal(previous.timestamp + DEFAULT_FILL_PERIOD_SECONDS);
    expect(BigInt(opened.fillDeadline)).to.equal(event.args.resolvedOrder.fillDeadline);
    expect(decodeOriginData(opened.originData)).to.deep.include({
      user: user.address,
      gasless: false,
      inputToken: NATIVE_TOKEN,
      inputAmount: UNIT,
      fillDeadline: opened.fillDeadline,
    });

    expect(await orderStatus(publicClient, { originSettler: settler(), orderId: opened.orderId })).to.deep.equal({ status: "open" });
    expect(await f.origin.orderStatus(opened.orderId)).to.equal(1n);
  });

  it("allows an output above the input of the same asset, and a fill deadline of the caller's within MAX_FILL_PERIOD", async function () {
    const latest = (await f.provider.getBlock("latest"))!.timestamp;
    const fillDeadline = latest + 86_400;
    const opened = await openOrder(wallet, publicClient, {
      originSettler: settler(),
      terms: ethTerms({ outputAmount: UNIT + 1n }),
      fillDeadline,
    });
    expect(opened.fillDeadline).to.equal(fillDeadline);
    expect(decodeOriginData(opened.originData).outputAmount).to.equal(UNIT + 1n);
  });

  it("opens a token order, approving the settler for exactly the input when short, and not again when enough", async function () {
    expect(await allowanceOfUser()).to.equal(0n);
    const escrowBefore = await f.inputToken.balanceOf(settler());
    let nonce = await nonceOfUser();
    const first = await openOrder(wallet, publicClient, { originSettler: settler(), terms: terms() });
    expect(first.approvalTransactionHash).to.match(/^0x[0-9a-f]{64}$/);
    expect(await nonceOfUser()).to.equal(nonce + 2);
    // The approval was the input, all of it taken by the escrow.
    expect(await allowanceOfUser()).to.equal(0n);
    expect(await f.inputToken.balanceOf(settler())).to.equal(escrowBefore + 100n * UNIT);
    const { event } = await openEventOf(first.transactionHash);
    expect(first.orderId).to.equal(event.args.orderId);
    expect(first.originData).to.equal(event.args.resolvedOrder.fillInstructions[0].originData);
    expect(await orderStatus(publicClient, { originSettler: settler(), orderId: first.orderId })).to.deep.equal({ status: "open" });

    // An allowance short of the input is raised to it; one that covers it is used as it is.
    await approveFromUser(settler(), 1n);
    nonce = await nonceOfUser();
    const short = await openOrder(wallet, publicClient, { originSettler: settler(), terms: terms() });
    expect(short.approvalTransactionHash).to.not.equal(undefined);
    expect(await nonceOfUser()).to.equal(nonce + 2);

    await approveFromUser(settler(), 1_000n * UNIT);
    nonce = await nonceOfUser();
    const enough = await openOrder(wallet, publicClient, { originSettler: settler(), terms: terms() });
    expect(enough).to.not.have.property("approvalTransactionHash");
    expect(await nonceOfUser()).to.equal(nonce + 1);
    expect(await allowanceOfUser()).to.equal(900n * UNIT);
    expect(decodeOriginData(enough.originData).nonce).to.equal(decodeOriginData(short.originData).nonce + 1n);
  });

  it("follows an order: open, filled on L1 (the destination's record), then settled on the L2", async function () {
    const { orderId, originData } = await openOrder(wallet, publicClient, { originSettler: settler(), terms: terms() });
    const destination = { client: publicClient, settler: f.destination.target as Address };
    expect(await orderStatus(publicClient, { originSettler: settler(), orderId, destination })).to.deep.equal({ status: "open" });

    const fill = await fillOnDestination(orderId, originData);
    const filledAt = BigInt((await f.provider.getBlock(fill.blockNumber))!.timestamp);
    const filled = { repayTo: await filler.getAddress(), filledAt };
    // Filled on L1, settling: the escrow waits for a proof of the fill.
    expect(await orderStatus(publicClient, { originSettler: settler(), orderId, destination })).to.deep.equal({ status: "open", filled });
    // Without the destination, only the origin's state.
    expect(await orderStatus(publicClient, { originSettler: settler(), orderId })).to.deep.equal({ status: "open" });

    await (await f.origin.settle(originData, await f.fillProof(orderId))).wait();
    expect(await orderStatus(publicClient, { originSettler: settler(), orderId, destination })).to.deep.equal({
      status: "settled",
      filled,
    });
  });

  it("opens a fast deposit on an L1OriginSettler the same way, and follows it to its fill on the L2 settler", async function () {
    // The other direction's settlers on the same chain: L1OriginSettler (the origin) and L2DestinationSettler.
    const messenger = await f.deploy("MockCrossDomainMessenger", []);
    const l2Destination = await f.deploy("L2DestinationSettler", [messenger.target]);
    const l1Origin = await f.deploy("L1OriginSettler", [
      {
        messenger: messenger.target,
        destinationSettler: l2Destination.target,
        destinationChainId: f.chainId,
        inputToken: f.inputToken.target,
        outputToken: f.outputToken.target,
        permit2: PERMIT2_ADDRESS,
        settlementWindow: SETTLEMENT_WINDOW,
      },
    ]);
    const opened = await openOrder(wallet, publicClient, { originSettler: l1Origin.target as Address, terms: terms() });
    expect(opened.approvalTransactionHash).to.be.a("string");
    expect(decodeOriginData(opened.originData)).to.deep.include({
      originSettler: l1Origin.target,
      destinationSettler: l2Destination.target,
      user: user.address,
    });
    const follow = { originSettler: l1Origin.target as Address, orderId: opened.orderId };
    const destination = { client: publicClient, settler: l2Destination.target as Address };
    expect(await orderStatus(publicClient, { ...follow, destination })).to.deep.equal({ status: "open" });
    await (await (f.outputToken.connect(filler) as Contract).approve(l2Destination.target, MaxUint256)).wait();
    await (await (l2Destination.connect(filler) as Contract).fill(opened.orderId, opened.originData, "0x")).wait();
    const status = await orderStatus(publicClient, { ...follow, destination });
    expect(status.status).to.equal("open");
    expect(status.filled?.repayTo).to.equal(await filler.getAddress());
  });

  it("reports an order it does not know as unknown, and a refunded one as refunded", async function () {
    const unknown = orderIdOf("0x1234");
    expect(await orderStatus(publicClient, { originSettler: settler(), orderId: unknown })).to.deep.equal({ status: "unknown" });

    const latest = (await f.provider.getBlock("latest"))!.timestamp;
    const { orderId, originData, fillDeadline } = await openOrder(wallet, publicClient, {
      originSettler: settler(),
      terms: ethTerms(),
      fillDeadline: latest + 60,
    });
    await f.provider.send("evm_increaseTime", [`0x${(60n + SETTLEMENT_WINDOW + 1n).toString(16)}`]);
    await f.provider.send("evm_mine", []);
    await (await f.origin.refund(originData)).wait();
    const destination = { client: publicClient, settler: f.destination.target as Address };
    expect(await orderStatus(publicClient, { originSettler: settler(), orderId, destination })).to.deep.equal({ status: "refunded" });
    expect(fillDeadline).to.equal(latest + 60);
  });

  it("refuses bad input with an InvalidArgumentError naming it, before any transaction", async function () {
    const latest = (await f.provider.getBlock("latest"))!.timestamp;
    const elsewhere = Wallet.createRandom().address as Address;
    const options = (overrides: Partial<OrderTerms> = {}, rest: Partial<OpenOrderOptions> = {}): OpenOrderOptions => ({
      originSettler: settler(),
      terms: terms(overrides),
      ...rest,
    });
    const cases: Array<[string, OpenOrderOptions]> = [
      ["terms.inputAmount", options({ inputAmount: 0n })],
      ["terms.outputAmount", options({ outputAmount: 0n })],
      ["terms.inputAmount", options({ inputAmount: -1n })],
      ["terms.inputAmount", options({ inputAmount: 100 as unknown as bigint })],
      ["terms.outputAmount", options({ outputAmount: 2n ** 256n })],
      ["terms.recipient", options({ recipient: NATIVE_TOKEN })],
      ["terms.recipient", options({ recipient: "0x1234" })],
      ["terms.inputToken", options({ inputToken: "not an address" as Address })],
      ["options.originSettler", options({}, { originSettler: NATIVE_TOKEN })],
      ["options.fillDeadline", options({}, { fillDeadline: 1.5 })],
      ["options.fillDeadline", options({}, { fillDeadline: 2 ** 32 })],
      // Against the settler and the chain.
      ["terms.inputToken", options({ inputToken: elsewhere })],
      ["terms.outputToken", options({ outputToken: elsewhere })],
      ["terms.destinationChainId", options({ destinationChainId: f.chainId + 1n })],
      ["options.fillDeadline", options({}, { fillDeadline: latest - 1 })],
      ["options.fillDeadline", options({}, { fillDeadline: latest + 86_400 + 60 })],
      ["terms.inputAmount", options({ inputAmount: 10n ** 29n })],
      ["terms.inputAmount", options({ inputToken: NATIVE_TOKEN, outputToken: NATIVE_TOKEN, inputAmount: 10n ** 30n })],
    ];
    const nonce = await nonceOfUser();
    const allowance = await allowanceOfUser();
    for (const [argument, bad] of cases) {
      const error = await openOrder(wallet, publicClient, bad).catch((caught: unknown) => caught);
      expect(error, argument).to.be.instanceOf(InvalidArgumentError).and.instanceOf(AvnError);
      expect(error, argument).to.include({ argument, code: "INVALID_ARGUMENT" });
    }
    // A wallet without an account, and a public client on another chain than the wallet's.
    const accountless = createWalletClient({ transport: transportOf() });
    expect(await openOrder(accountless, publicClient, options()).catch((caught: unknown) => caught)).to.include({
      argument: "options.account",
    });
    const otherChain = createPublicClient({ transport: transportOf((method) => (method === "eth_chainId" ? "0x1" : undefined)) });
    expect(await openOrder(wallet, otherChain, options()).catch((caught: unknown) => caught)).to.include({ argument: "publicClient" });
    // orderStatus's own arguments.
    for (const [argument, orderId, originSettler] of [
      ["options.orderId", "0x1234", settler()],
      ["options.originSettler", orderIdOf("0x"), "settler"],
    ] as const) {
      const error = await orderStatus(publicClient, { originSettler: originSettler as Address, orderId }).catch(
        (caught: unknown) => caught,
      );
      expect(error, argument).to.be.instanceOf(InvalidArgumentError).and.include({ argument });
    }

    expect(await nonceOfUser(), "nothing was sent").to.equal(nonce);
    expect(await allowanceOfUser()).to.equal(allowance);
  });

  describe("signGaslessOrder: the user's Permit2 signature for openFor", function () {
    const gasless = async (overrides: Partial<GaslessOrder> = {}): Promise<GaslessOrder> => {
      const latest = (await f.provider.getBlock("latest"))!.timestamp;
      return {
        originSettler: settler(),
        user: user.address,
        nonce: 7n,
        originChainId: f.chainId,
        openDeadline: latest + 600,
        fillDeadline: latest + 3600,
        orderData: terms(),
        ...overrides,
      };
    };

    it("signs an order a filler opens with openFor, the user sending nothing but a one-time Permit2 approval", async function () {
      await approveFromUser(PERMIT2_ADDRESS, MaxUint256);
      const nonce = await nonceOfUser();
      const order = await gasless();
      const signature = await signGaslessOrder(wallet, order);
      const receipt = await (await (f.origin.connect(filler) as Contract).openFor(gaslessOrderStruct(order), signature, "0x")).wait();
      const { event } = await openEventOf(receipt!.hash as Hex);
      const orderId = event.args.orderId as Hex;
      expect(decodeOriginData(event.args.resolvedOrder.fillInstructions[0].originData)).to.deep.include({ gasless: true, nonce: 7n });
      expect(await orderStatus(publicClient, { originSettler: settler(), orderId })).to.deep.equal({ status: "open" });
      expect(await nonceOfUser()).to.equal(nonce);
    });

    it("refuses an ETH input, another signer than the user, or a malformed order, before signing", async function () {
      const cases: Array<[string, Partial<GaslessOrder>]> = [
        ["order.orderData.inputToken", { orderData: ethTerms() }],
        ["order.user", { user: (await filler.getAddress()) as Address }],
        ["order.orderData.inputAmount", { orderData: terms({ inputAmount: 0n }) }],
        ["order.openDeadline", { openDeadline: -1 }],
        ["order.nonce", { nonce: 1 as unknown as bigint }],
      ];
      for (const [argument, overrides] of cases) {
        const error = await signGaslessOrder(wallet, await gasless(overrides)).catch((caught: unknown) => caught);
        expect(error, argument).to.be.instanceOf(InvalidArgumentError).and.include({ argument });
      }
    });
  });
});
