import { expect } from "chai";
import { type Contract, ContractFactory, MaxUint256, type Signer, toBeHex, Wallet, ZeroAddress } from "ethers";
import hre from "hardhat";
import { type Address, type Hex } from "viem";

import {
  decodeOriginData,
  encodeOrderData,
  NATIVE_TOKEN,
  ORDER_DATA_TYPE,
  OrderStatus,
  PERMIT2_ADDRESS,
  type OrderTerms,
} from "@avn/protocol/intents";
import { permit2Code } from "../../../src/op/artifacts.ts";
import { oneChainAsL1AndL2 } from "../../helpers/one-chain-l1.ts";
import { revertOf } from "./settlers-fixture.ts";

const UNIT = 10n ** 18n;
const SETTLEMENT_WINDOW = 3_600n;

/**
 * The L1 → L2 direction (fast deposits), in-process: one chain plays both sides, and OP's messengers are the mock
 * (`MockCrossDomainMessenger`), which records what the L2 settler sends and relays it as OP's L1 messenger does
 * (`xDomainMessageSender()` set during the call, a reverted relay recorded as failed). The devnet test of the solver
 * runs the real messengers and the real withdrawal proof (test/ts/intents/Solver.ts).
 */
describe("Intent settlers, L1 → L2: orders opened on L1, filled on the L2, settled by the L2 settler's message", function () {
  this.timeout(300_000);
  let provider: Awaited<ReturnType<typeof oneChainAsL1AndL2>>["provider"];
  let deployer: Signer;
  let user: Signer;
  let filler: Signer;
  let other: Signer;
  let chainId: bigint;
  let l1Token: Contract;
  let l2Token: Contract;
  let messenger: Contract;
  let origin: Contract;
  let destination: Contract;
  let recipient: string;

  const deploy = async (name: string, args: unknown[]) => {
    const artifact = await hre.artifacts.readArtifact(name);
    const contract = await new ContractFactory(artifact.abi, artifact.bytecode, deployer).deploy(...args);
    await contract.waitForDeployment();
    return contract as Contract;
  };
  const now = async () => (await provider.getBlock("latest"))!.timestamp;
  /** `L1OriginSettler`'s constructor settings, with `messengerAddress` as its messenger. */
  const settingsOf = (messengerAddress: unknown) => ({
    messenger: messengerAddress,
    destinationSettler: destination.target,
    destinationChainId: chainId,
    inputToken: l1Token.target,
    outputToken: l2Token.target,
    permit2: PERMIT2_ADDRESS,
    settlementWindow: SETTLEMENT_WINDOW,
  });
  const terms = (overrides: Partial<OrderTerms> = {}): OrderTerms => ({
    inputToken: l1Token.target as Address,
    inputAmount: 100n * UNIT,
    outputToken: l2Token.target as Address,
    outputAmount: 99n * UNIT,
    recipient: recipient as Address,
    destinationChainId: chainId,
    ...overrides,
  });

  async function open(t: OrderTerms = terms(), settler: Contract = origin, fillDeadline?: number) {
    const asUser = settler.connect(user) as Contract;
    if (t.inputToken !== NATIVE_TOKEN) await (await (l1Token.connect(user) as Contract).approve(settler.target, t.inputAmount)).wait();
    const order = { fillDeadline: fillDeadline ?? (await now()) + 3600, orderDataType: ORDER_DATA_TYPE, orderData: encodeOrderData(t) };
    const receipt = await (await asUser.open(order, { value: t.inputToken === NATIVE_TOKEN ? t.inputAmount : 0n })).wait();
    const event = receipt.logs
      .map((log: { topics: string[]; data: string }) => settler.interface.parseLog(log))
      .find((e: { name: string } | null) => e?.name === "Open");
    return { orderId: event.args.orderId as string, originData: event.args.resolvedOrder.fillInstructions[0].originData as Hex };
  }

  async function fill(orderId: string, originData: string, fillerData = "0x") {
    const order = decodeOriginData(originData as Hex);
    const value = order.outputToken === NATIVE_TOKEN ? order.outputAmount : 0n;
    return (await (destination.connect(filler) as Contract).fill(orderId, originData, fillerData, { value })).wait();
  }

  /** Reports `originDatas` from `filler`, and returns the message the L2 messenger was given. */
  async function report(originDatas: string[]) {
    const receipt = await (await (destination.connect(filler) as Contract).reportFills(originDatas)).wait();
    const sent = await messenger.sent((await messenger.sentCount()) - 1n);
    return { receipt, sent };
  }

  /** Relays a sent message as the L1 messenger would; returns whether the relay succeeded. */
  async function relay(sent: { target: string; minGasLimit: bigint; sender: string; message: string }, nonce: bigint) {
    const receipt = await (
      await messenger.relayMessage(nonce, sent.sender, sent.target, 0n, sent.minGasLimit, sent.message, { gasLimit: 15_000_000n })
    ).wait();
    const names = receipt.logs.map((log: { topics: string[]; data: string }) => messenger.interface.parseLog(log)?.name);
    return { succeeded: names.includes("RelayedMessage"), receipt };
  }
  let nonce = 0n;
  const relayLast = async (sent: Parameters<typeof relay>[0]) => relay(sent, nonce++);

  before(async function () {
    let signers: Signer[];
    ({ provider, signers } = await oneChainAsL1AndL2());
    [deployer, user, filler, other] = signers;
    chainId = (await provider.getNetwork()).chainId;
    await provider.send("hardhat_setCode", [PERMIT2_ADDRESS, permit2Code(chainId)]);
    recipient = Wallet.createRandom().address;
    l1Token = await deploy("PlainERC20", [await deployer.getAddress(), 10n ** 30n]);
    l2Token = await deploy("PlainERC20", [await deployer.getAddress(), 10n ** 30n]);
    messenger = await deploy("MockCrossDomainMessenger", []);
    destination = await deploy("L2DestinationSettler", [messenger.target]);
    origin = await deploy("L1OriginSettler", [settingsOf(messenger.target)]);
    await (await l1Token.transfer(await user.getAddress(), 10_000n * UNIT)).wait();
    await (await l2Token.transfer(await filler.getAddress(), 10_000n * UNIT)).wait();
    await (await (l2Token.connect(filler) as Contract).approve(destination.target, MaxUint256)).wait();
  });

  it("names its messenger and destination, and refuses a zero address at deployment", async function () {
    expect(await origin.MESSENGER()).to.equal(messenger.target);
    expect(await origin.DESTINATION_SETTLER()).to.equal(destination.target);
    expect(await destination.MESSENGER()).to.equal(messenger.target);
    const factory = async (name: string) => {
      const artifact = await hre.artifacts.readArtifact(name);
      return new ContractFactory(artifact.abi, artifact.bytecode, deployer);
    };
    const destinationFactory = await factory("L2DestinationSettler");
    expect(
      (
        await revertOf(
          destinationFactory.getDeployTransaction(ZeroAddress).then((tx) => deployer.estimateGas(tx)),
          destination,
        )
      ).name,
    ).to.equal("DestinationSettler_ZeroAddress");
    const originFactory = await factory("L1OriginSettler");
    const settings = settingsOf(ZeroAddress);
    expect(
      (
        await revertOf(
          originFactory.getDeployTransaction(settings).then((tx) => deployer.estimateGas(tx)),
          origin,
        )
      ).name,
    ).to.equal("OriginSettler_ZeroAddress");
  });

  it("pays the recipient on the L2 at once, and the filler on L1 when the report's message is relayed, once", async function () {
    const { orderId, originData } = await open();
    const escrowed = await l1Token.balanceOf(origin.target);
    await fill(orderId, originData);
    expect(await l2Token.balanceOf(recipient)).to.equal(99n * UNIT);
    expect(await origin.orderStatus(orderId)).to.equal(BigInt(OrderStatus.open));

    const { receipt, sent } = await report([originData]);
    const reported = receipt.logs
      .map((log: { topics: string[]; data: string }) => destination.interface.parseLog(log))
      .find((e: { name: string } | null) => e?.name === "FillsReported");
    expect(reported.args.originSettler).to.equal(origin.target);
    expect(sent.target).to.equal(origin.target);
    expect(sent.sender).to.equal(destination.target);
    expect(sent.minGasLimit).to.equal(await destination.reportGasLimit(1n));
    expect(origin.interface.parseTransaction({ data: sent.message })!.args.repayTos).to.deep.equal([await filler.getAddress()]);

    const fillerBefore = await l1Token.balanceOf(await filler.getAddress());
    const { succeeded, receipt: relayed } = await relayLast(sent);
    expect(succeeded).to.equal(true);
    const settled = relayed.logs
      .map((log: { topics: string[]; data: string }) => origin.interface.parseLog(log))
      .find((e: { name: string } | null) => e?.name === "SettledByMessage");
    expect(settled.args.orderId).to.equal(orderId);
    expect(settled.args.filler).to.equal(await filler.getAddress());
    expect(await l1Token.balanceOf(await filler.getAddress())).to.equal(fillerBefore + 100n * UNIT);
    expect(await l1Token.balanceOf(origin.target)).to.equal(escrowed - 100n * UNIT);
    expect(await origin.orderStatus(orderId)).to.equal(BigInt(OrderStatus.settled));

    // A second report of the same fill is relayed, skips the order, and pays nothing.
    const again = await report([originData]);
    const { receipt: skippedReceipt } = await relayLast(again.sent);
    const skipped = skippedReceipt.logs
      .map((log: { topics: string[]; data: string }) => origin.interface.parseLog(log))
      .find((e: { name: string } | null) => e?.name === "ReportSkipped");
    expect(skipped.args.status).to.equal(BigInt(OrderStatus.settled));
    expect(await l1Token.balanceOf(await filler.getAddress())).to.equal(fillerBefore + 100n * UNIT);
  });

  it("settles a batch of token and ETH orders in one message, skips a refunded one, and keeps ETH a payee refuses", async function () {
    const wallet = await deploy("EthToggleWallet", [await filler.getAddress()]);
    const eth = terms({ inputToken: NATIVE_TOKEN, outputToken: NATIVE_TOKEN, inputAmount: UNIT, outputAmount: UNIT / 2n });
    const a = await open();
    const b = await open(eth);
    const late = await open(terms(), origin, (await now()) + 30);
    await fill(a.orderId, a.originData);
    await fill(b.orderId, b.originData, toBeHex(wallet.target as string, 32));
    await fill(late.orderId, late.originData);
    // The late order's user takes the escrow back before the filler reports: the filler's risk, not the user's.
    await provider.send("evm_increaseTime", [toBeHex(30n + SETTLEMENT_WINDOW + 1n)]);
    await (await (origin.connect(other) as Contract).refund(late.originData)).wait();

    const userBefore = await l1Token.balanceOf(await user.getAddress());
    const { sent } = await report([a.originData, b.originData, late.originData]);
    expect(sent.minGasLimit).to.equal(await destination.reportGasLimit(3n));
    const { succeeded, receipt } = await relayLast(sent);
    expect(succeeded).to.equal(true);
    const events = receipt.logs
      .map((log: { topics: string[]; data: string }) => origin.interface.parseLog(log))
      .filter((e: unknown) => e !== null);
    expect(
      events.filter((e: { name: string }) => e.name === "SettledByMessage").map((e: { args: { orderId: string } }) => e.args.orderId),
    ).to.deep.equal([a.orderId, b.orderId]);
    expect(events.find((e: { name: string }) => e.name === "ReportSkipped").args.orderId).to.equal(late.orderId);
    expect(await origin.orderStatus(late.orderId)).to.equal(BigInt(OrderStatus.refunded));
    expect(await l1Token.balanceOf(await user.getAddress())).to.equal(userBefore);
    expect(await origin.owed(wallet.target)).to.equal(UNIT);
    expect(await origin.orderStatus(b.orderId)).to.equal(BigInt(OrderStatus.settled));
  });

  it("refuses a report that is not the destination settler's relayed message, or malformed, and moves nothing", async function () {
    const { orderId, originData } = await open();
    await fill(orderId, originData);
    const repayTo = await filler.getAddress();
    const direct = await revertOf((origin.connect(other) as Contract).settleReported.staticCall([originData], [repayTo]), origin);
    expect(direct.name).to.equal("OriginSettler_NotFromDestination");
    expect(direct.args.sender).to.equal(await other.getAddress());
    const message = origin.interface.encodeFunctionData("settleReported", [[originData], [repayTo]]);
    const forged = await revertOf(messenger.relay.staticCall(await other.getAddress(), origin.target, message), origin);
    expect(forged.name).to.equal("OriginSettler_NotFromDestination");
    const uneven = origin.interface.encodeFunctionData("settleReported", [[originData], [repayTo, repayTo]]);
    expect((await revertOf(messenger.relay.staticCall(destination.target, origin.target, uneven), origin)).name).to.equal(
      "OriginSettler_MalformedReport",
    );
    expect(await origin.orderStatus(orderId)).to.equal(BigInt(OrderStatus.open));
  });

  it("reports only recorded fills of one origin settler, from 1 to MAX_REPORT of them", async function () {
    const { orderId, originData } = await open();
    const asFiller = destination.connect(filler) as Contract;
    expect((await revertOf(asFiller.reportFills.staticCall([originData]), destination)).name).to.equal("DestinationSettler_NotFilled");
    expect((await revertOf(asFiller.reportFills.staticCall([]), destination)).name).to.equal("DestinationSettler_BadReportSize");
    const max = await destination.MAX_REPORT();
    expect((await revertOf(asFiller.reportFills.staticCall(Array(Number(max) + 1).fill(originData)), destination)).name).to.equal(
      "DestinationSettler_BadReportSize",
    );
    expect((await revertOf(destination.reportGasLimit.staticCall(max + 1n), destination)).name).to.equal(
      "DestinationSettler_BadReportSize",
    );

    const second = await deploy("L1OriginSettler", [settingsOf(messenger.target)]);
    const other = await open(terms(), second);
    await fill(orderId, originData);
    await fill(other.orderId, other.originData);
    const mixed = await revertOf(asFiller.reportFills.staticCall([originData, other.originData]), destination);
    expect(mixed.name).to.equal("DestinationSettler_MixedOrigins");
    expect([mixed.args.first, mixed.args.other]).to.deep.equal([origin.target, second.target]);
  });

  it("keeps the L1 record's layout: the L2 settler's fill record is at the same documented slot", async function () {
    const { orderId, originData } = await open();
    await fill(orderId, originData);
    const slot = await destination.fillSlot(orderId);
    const word = BigInt(await provider.getStorage(destination.target, slot));
    expect(`0x${(word & ((1n << 160n) - 1n)).toString(16).padStart(40, "0")}`).to.equal((await filler.getAddress()).toLowerCase());
    expect(await destination.FILLS_SLOT()).to.equal(0n);
  });
});
