import { expect } from "chai";
import { AbiCoder, Contract, getAddress, Interface, MaxUint256, type Signer, toBeHex, Wallet, ZeroAddress, zeroPadValue } from "ethers";
import { type Address, type Hex } from "viem";

import {
  decodeFillRecord,
  decodeOriginData,
  encodeOrderData,
  encodeOriginData,
  fillSlotOf,
  gaslessOrderStruct,
  NATIVE_TOKEN,
  ORDER_DATA_TYPE,
  ORDER_DATA_TYPE_STRING,
  orderIdOf,
  OrderStatus,
  PERMIT2_ADDRESS,
  PERMIT2_ORDER_TYPES,
  permit2Domain,
  permit2OrderMessage,
  type GaslessOrder,
  type OrderTerms,
} from "@avn/protocol/intents";
import { keccak256, toHex } from "viem";
import { MAX_PROOF_AGE, revertOf, SETTLEMENT_WINDOW, settlersFixture, type SettlersFixture } from "./settlers-fixture.ts";

const UNIT = 10n ** 18n;

describe("Intent settlers: ERC-7683 orders opened on the L2, filled on L1, settled by a storage proof", function () {
  this.timeout(300_000);
  let f: SettlersFixture;
  let user: Signer;
  let filler: Signer;
  let other: Signer;
  let recipient: string;
  let now: () => Promise<number>;

  const terms = (overrides: Partial<OrderTerms> = {}): OrderTerms => ({
    inputToken: f.inputToken.target as Address,
    inputAmount: 100n * UNIT,
    outputToken: f.outputToken.target as Address,
    outputAmount: 99n * UNIT,
    recipient: recipient as Address,
    destinationChainId: f.chainId,
    ...overrides,
  });
  const onchainOrder = async (t: OrderTerms, fillDeadline?: number) => ({
    fillDeadline: fillDeadline ?? (await now()) + 3600,
    orderDataType: ORDER_DATA_TYPE,
    orderData: encodeOrderData(t),
  });

  /** Opens an order from `user`, returns its id and origin data (from the `Open` event). */
  async function open(t: OrderTerms = terms(), from: Signer = user, fillDeadline?: number) {
    const origin = f.origin.connect(from) as Contract;
    if (t.inputToken !== NATIVE_TOKEN)
      await (await (f.inputToken.connect(from) as Contract).approve(f.origin.target, t.inputAmount)).wait();
    const order = await onchainOrder(t, fillDeadline);
    const resolved = await origin.resolve(order);
    const receipt = await (await origin.open(order, { value: t.inputToken === NATIVE_TOKEN ? t.inputAmount : 0n })).wait();
    const event = receipt.logs
      .map((log: { topics: string[]; data: string }) => f.origin.interface.parseLog(log))
      .find((e: { name: string } | null) => e?.name === "Open");
    const orderId = event.args.orderId as string;
    const originData = event.args.resolvedOrder.fillInstructions[0].originData as Hex;
    expect(resolved.orderId, "resolve() before open names the same id").to.equal(orderId);
    return { orderId, originData, resolved: event.args.resolvedOrder, receipt };
  }

  async function fill(orderId: string, originData: string, from: Signer = filler, fillerData = "0x") {
    const order = decodeOriginData(originData as Hex);
    const destination = f.destination.connect(from) as Contract;
    if (order.outputToken !== NATIVE_TOKEN) {
      await (await (f.outputToken.connect(from) as Contract).approve(f.destination.target, MaxUint256)).wait();
    }
    return (
      await destination.fill(orderId, originData, fillerData, { value: order.outputToken === NATIVE_TOKEN ? order.outputAmount : 0n })
    ).wait();
  }

  const increaseTime = async (seconds: bigint) => {
    await f.provider.send("evm_increaseTime", [toBeHex(seconds)]);
    await f.provider.send("evm_mine", []);
  };

  before(async function () {
    f = await settlersFixture();
    [, user, filler, other] = f.signers;
    recipient = Wallet.createRandom().address;
    now = async () => (await f.provider.getBlock("latest"))!.timestamp;
    for (const account of [user, filler, other]) {
      const address = await account.getAddress();
      await (await f.inputToken.transfer(address, 10_000n * UNIT)).wait();
      await (await f.outputToken.transfer(address, 10_000n * UNIT)).wait();
    }
  });

  it("publishes the order data type the TypeScript side uses, and the fill record's slot", async function () {
    expect(await f.origin.ORDER_DATA_TYPE()).to.equal(ORDER_DATA_TYPE);
    expect(ORDER_DATA_TYPE).to.equal(keccak256(toHex(ORDER_DATA_TYPE_STRING)));
    expect(await f.destination.FILLS_SLOT()).to.equal(0n);
    const id = keccak256(toHex("any order"));
    expect(await f.destination.fillSlot(id)).to.equal(fillSlotOf(id));
  });

  it("opens a token order: escrow, Open event as ERC-7683 describes it, id = keccak256(originData), status open", async function () {
    const t = terms();
    const before = await f.inputToken.balanceOf(f.origin.target);
    const { orderId, originData, resolved } = await open(t);
    expect(await f.inputToken.balanceOf(f.origin.target)).to.equal(before + t.inputAmount);
    expect(orderId).to.equal(orderIdOf(originData));
    expect(await f.origin.orderStatus(orderId)).to.equal(BigInt(OrderStatus.open));
    const order = decodeOriginData(originData);
    expect(order).to.deep.include({ user: getAddress(await user.getAddress()), gasless: false, originSettler: f.origin.target });
    expect(order.destinationSettler).to.equal(f.destination.target);
    expect(resolved.user).to.equal(await user.getAddress());
    expect(resolved.openDeadline).to.equal(2n ** 32n - 1n);
    expect(resolved.maxSpent[0].token).to.equal(zeroPadValue(t.outputToken, 32));
    expect(resolved.maxSpent[0].amount).to.equal(t.outputAmount);
    expect(resolved.maxSpent[0].recipient).to.equal(zeroPadValue(recipient, 32).toLowerCase());
    expect(resolved.minReceived[0].recipient).to.equal(zeroPadValue("0x", 32));
    expect(resolved.minReceived[0].amount).to.equal(t.inputAmount);
    expect(resolved.fillInstructions[0].destinationSettler).to.equal(zeroPadValue(f.destination.target as string, 32).toLowerCase());
    // The same terms opened again are another order: the user's nonce moved on.
    const again = await open(t);
    expect(again.orderId).to.not.equal(orderId);
    expect(decodeOriginData(again.originData).nonce).to.equal(order.nonce + 1n);
  });

  it("opens an ETH order with exactly the input as value", async function () {
    const t = terms({ inputToken: NATIVE_TOKEN, outputToken: NATIVE_TOKEN, inputAmount: UNIT, outputAmount: (UNIT * 99n) / 100n });
    const before = await f.provider.getBalance(f.origin.target);
    const { orderId } = await open(t);
    expect(await f.provider.getBalance(f.origin.target)).to.equal(before + UNIT);
    expect(await f.origin.orderStatus(orderId)).to.equal(1n);
    const order = await onchainOrder(t);
    for (const value of [UNIT - 1n, 0n]) {
      const error = await revertOf((f.origin.connect(user) as Contract).open.staticCall(order, { value }), f.origin);
      expect(error.name).to.equal("OriginSettler_WrongValue");
    }
    const withValue = await revertOf(
      (f.origin.connect(user) as Contract).open.staticCall(await onchainOrder(terms()), { value: 1n }),
      f.origin,
    );
    expect(withValue.name).to.equal("OriginSettler_WrongValue");
  });

  it("refuses orders it cannot settle, each with a named error, and moves nothing", async function () {
    const origin = f.origin.connect(user) as Contract;
    const t0 = await now();
    const unknownToken = Wallet.createRandom().address as Address;
    const cases: Array<[string, () => Promise<unknown>]> = [
      [
        "OriginSettler_WrongOrderDataType",
        async () => origin.open.staticCall({ ...(await onchainOrder(terms())), orderDataType: keccak256(toHex("x")) }),
      ],
      [
        "OriginSettler_MalformedOrderData",
        async () => origin.open.staticCall({ ...(await onchainOrder(terms())), orderData: encodeOrderData(terms()) + "00" }),
      ],
      ["OriginSettler_UnsupportedInputToken", async () => origin.open.staticCall(await onchainOrder(terms({ inputToken: unknownToken })))],
      [
        "OriginSettler_UnsupportedOutputToken",
        async () => origin.open.staticCall(await onchainOrder(terms({ outputToken: unknownToken }))),
      ],
      ["OriginSettler_ZeroAmount", async () => origin.open.staticCall(await onchainOrder(terms({ inputAmount: 0n })))],
      ["OriginSettler_ZeroAmount", async () => origin.open.staticCall(await onchainOrder(terms({ outputAmount: 0n })))],
      ["OriginSettler_ZeroRecipient", async () => origin.open.staticCall(await onchainOrder(terms({ recipient: ZeroAddress as Address })))],
      ["OriginSettler_WrongDestinationChain", async () => origin.open.staticCall(await onchainOrder(terms({ destinationChainId: 1n })))],
      ["OriginSettler_BadFillDeadline", async () => origin.open.staticCall(await onchainOrder(terms(), t0 - 1))],
      ["OriginSettler_BadFillDeadline", async () => origin.open.staticCall(await onchainOrder(terms(), t0 + 86_400 + 60))],
    ];
    for (const [name, call] of cases) expect((await revertOf(call(), f.origin)).name).to.equal(name);
  });

  it("fills once, before the deadline: pays the recipient from the filler and records the repayment address", async function () {
    const { orderId, originData } = await open();
    const before = await f.outputToken.balanceOf(recipient);
    const receipt = await fill(orderId, originData);
    expect(await f.outputToken.balanceOf(recipient)).to.equal(before + 99n * UNIT);
    const [repayTo, filledAt] = await f.destination.fills(orderId);
    expect(repayTo).to.equal(await filler.getAddress());
    expect(filledAt).to.equal(BigInt((await f.provider.getBlock(receipt.blockNumber))!.timestamp));
    // The record is the word at the documented slot.
    const word = await f.provider.getStorage(f.destination.target, fillSlotOf(orderId as Hex));
    expect(decodeFillRecord(BigInt(word))).to.deep.equal({ repayTo: (await filler.getAddress()).toLowerCase(), filledAt });

    const second = await revertOf((f.destination.connect(other) as Contract).fill.staticCall(orderId, originData, "0x"), f.destination);
    expect(second.name).to.equal("DestinationSettler_AlreadyFilled");
    expect(second.args.repayTo).to.equal(await filler.getAddress());
  });

  it("fills ETH orders with exactly the output as value, and repays the address the filler names", async function () {
    const t = terms({ inputToken: NATIVE_TOKEN, outputToken: NATIVE_TOKEN, inputAmount: UNIT, outputAmount: UNIT / 2n });
    const { orderId, originData } = await open(t);
    const destination = f.destination.connect(filler) as Contract;
    const wrong = await revertOf(destination.fill.staticCall(orderId, originData, "0x", { value: UNIT }), f.destination);
    expect(wrong.name).to.equal("DestinationSettler_WrongValue");
    for (const bad of ["0x01", AbiCoder.defaultAbiCoder().encode(["address"], [ZeroAddress]), "0x" + "ff".repeat(32)]) {
      expect((await revertOf(destination.fill.staticCall(orderId, originData, bad, { value: UNIT / 2n }), f.destination)).name).to.equal(
        "DestinationSettler_BadFillerData",
      );
    }
    const repayTo = Wallet.createRandom().address;
    const before = await f.provider.getBalance(recipient);
    await fill(orderId, originData, filler, AbiCoder.defaultAbiCoder().encode(["address"], [repayTo]));
    expect(await f.provider.getBalance(recipient)).to.equal(before + UNIT / 2n);
    expect((await f.destination.fills(orderId))[0]).to.equal(repayTo);
    const tokenOrder = await open();
    const valued = await revertOf(
      destination.fill.staticCall(tokenOrder.orderId, tokenOrder.originData, "0x", { value: 1n }),
      f.destination,
    );
    expect(valued.name).to.equal("DestinationSettler_WrongValue");
  });

  it("refuses a fill after the deadline, of another id, or meant for another chain or settler, and moves nothing", async function () {
    const { orderId, originData } = await open(terms(), user, (await now()) + 100);
    const destination = f.destination.connect(filler) as Contract;
    const wrongId = await revertOf(destination.fill.staticCall(keccak256(toHex("other")), originData, "0x"), f.destination);
    expect(wrongId.name).to.equal("DestinationSettler_WrongOrderId");
    const elsewhere = encodeOriginData({ ...decodeOriginData(originData), destinationChainId: 1n });
    expect((await revertOf(destination.fill.staticCall(orderIdOf(elsewhere), elsewhere, "0x"), f.destination)).name).to.equal(
      "DestinationSettler_WrongDestination",
    );
    const otherSettler = encodeOriginData({
      ...decodeOriginData(originData),
      destinationSettler: Wallet.createRandom().address as Address,
    });
    expect((await revertOf(destination.fill.staticCall(orderIdOf(otherSettler), otherSettler, "0x"), f.destination)).name).to.equal(
      "DestinationSettler_WrongDestination",
    );
    await increaseTime(101n);
    const before = await f.outputToken.balanceOf(recipient);
    const late = await revertOf(destination.fill(orderId, originData, "0x"), f.destination);
    expect(late.name).to.equal("DestinationSettler_FillExpired");
    expect(await f.outputToken.balanceOf(recipient)).to.equal(before);
    expect((await f.destination.fills(orderId))[0]).to.equal(ZeroAddress);
  });

  it("settles to the recorded filler on a proof of the record, once; anyone may submit it", async function () {
    const { orderId, originData } = await open();
    await fill(orderId, originData);
    const proof = await f.fillProof(orderId);
    const fillerBalance = await f.inputToken.balanceOf(await filler.getAddress());
    const receipt = await (await (f.origin.connect(other) as Contract).settle(originData, proof)).wait();
    expect(await f.inputToken.balanceOf(await filler.getAddress())).to.equal(fillerBalance + 100n * UNIT);
    expect(await f.origin.orderStatus(orderId)).to.equal(BigInt(OrderStatus.settled));
    const settled = receipt.logs
      .map((log: { topics: string[]; data: string }) => f.origin.interface.parseLog(log))
      .find((e: { name: string } | null) => e?.name === "Settled");
    expect(settled.args.filler).to.equal(await filler.getAddress());

    const again = await revertOf(f.origin.settle.staticCall(originData, proof), f.origin);
    expect(again.name).to.equal("OriginSettler_OrderNotOpen");
    expect(again.args.status).to.equal(BigInt(OrderStatus.settled));
    expect((await revertOf(f.origin.refund.staticCall(originData), f.origin)).name).to.equal("OriginSettler_OrderNotOpen");
  });

  it("refuses a settlement on another order's record, another settler's record, an unknown block, a forged word, or no fill", async function () {
    const a = await open();
    const b = await open();
    await fill(a.orderId, a.originData);
    const proofOfA = await f.fillProof(a.orderId);
    // a's nodes prove nothing about b's record. How the verifier says so depends on where b's key leaves a's path,
    // which the order ids decide: when it leaves at a's last node (a's leaf, or a branch with no child for b
    // there), a's nodes are exactly a valid proof that b's slot is absent, and the claim of a fill is refused
    // (InclusionClaimMismatch); anywhere else they end too soon for b's key or run past where its walk ends
    // (SlotProofInvalid). b's own proof of absence tells which: it is a's nodes only in the first case.
    const { storageProof } = (await f.provider.send("eth_getProof", [
      f.destination.target,
      [fillSlotOf(a.orderId as Hex), fillSlotOf(b.orderId as Hex)],
      "latest",
    ])) as { storageProof: Array<{ proof: string[] }> };
    const [nodesOfA, absenceOfB] = storageProof.map(({ proof }) => proof.map((node) => node.toLowerCase()));
    const provesBAbsent = absenceOfB.length === nodesOfA.length && absenceOfB.every((node, i) => node === nodesOfA[i]);
    const another = await revertOf(f.origin.settle.staticCall(b.originData, proofOfA), f.origin, f.verifier);
    expect(another.name).to.equal(provesBAbsent ? "StorageProofVerifier_InclusionClaimMismatch" : "StorageProofVerifier_SlotProofInvalid");
    expect(another.args.slot).to.equal(fillSlotOf(b.orderId as Hex));
    if (provesBAbsent) expect(another.args.claimedIncluded, "a fill was claimed").to.equal(true);

    // The same order filled in another DestinationSettler (the account is not the one the origin settler trusts).
    const rogue = await f.deploy("DestinationSettler", []);
    const rogueProof = await f.fillProof(b.orderId, rogue.target as string);
    const wrongAccount = await revertOf(f.origin.settle.staticCall(b.originData, rogueProof), f.origin, f.verifier);
    expect(wrongAccount.name).to.equal("StorageProofVerifier_AccountProofInvalid");

    // A proof of the record at a block the L2 does not know.
    const unknown = await f.fillProof(a.orderId);
    await f.setL1Block(BigInt(await f.provider.getBlockNumber()));
    expect((await revertOf(f.origin.settle.staticCall(a.originData, unknown), f.origin, f.verifier)).name).to.equal(
      "StorageProofVerifier_UnknownBlock",
    );

    // The record's word replaced by another filler's: the leaf no longer hashes to its parent.
    const fresh = await f.fillProof(a.orderId);
    const word = (await f.provider.getStorage(f.destination.target, fillSlotOf(a.orderId as Hex))).slice(2).replace(/^0+/, "");
    const forgedFiller = (await other.getAddress()).slice(2).toLowerCase();
    const forged = fresh.replace(word.slice(-40), forgedFiller);
    expect(forged).to.not.equal(fresh);
    const forgedError = await revertOf(f.origin.settle.staticCall(a.originData, forged), f.origin, f.verifier);
    expect(forgedError.name).to.equal("StorageProofVerifier_SlotProofInvalid");

    // b is not filled: the proof of its slot is an exclusion proof.
    const notFilled = await revertOf(f.origin.settle.staticCall(b.originData, await f.fillProof(b.orderId)), f.origin, f.verifier);
    expect(notFilled.name).to.equal("OriginSettler_NotFilled");
    expect(await f.origin.orderStatus(b.orderId)).to.equal(1n);
    expect(await f.origin.orderStatus(a.orderId)).to.equal(1n);
  });

  it("refunds the user after the fill deadline and the settlement window, not before, and only once", async function () {
    const { orderId, originData } = await open(terms(), user, (await now()) + 50);
    const early = await revertOf(f.origin.refund.staticCall(originData), f.origin);
    expect(early.name).to.equal("OriginSettler_RefundTooEarly");
    await increaseTime(50n + SETTLEMENT_WINDOW - 5n);
    expect((await revertOf(f.origin.refund.staticCall(originData), f.origin)).name).to.equal("OriginSettler_RefundTooEarly");
    await increaseTime(10n);
    const before = await f.inputToken.balanceOf(await user.getAddress());
    await (await (f.origin.connect(other) as Contract).refund(originData)).wait();
    expect(await f.inputToken.balanceOf(await user.getAddress())).to.equal(before + 100n * UNIT);
    expect(await f.origin.orderStatus(orderId)).to.equal(BigInt(OrderStatus.refunded));
    const again = await revertOf(f.origin.refund.staticCall(originData), f.origin);
    expect(again.name).to.equal("OriginSettler_OrderNotOpen");
    expect((await revertOf(f.origin.settle.staticCall(originData, "0x"), f.origin)).name).to.equal("OriginSettler_OrderNotOpen");
    expect(
      (await revertOf(f.origin.refund.staticCall(encodeOriginData({ ...decodeOriginData(originData), nonce: 999n })), f.origin)).args
        .status,
    ).to.equal(0n);
  });

  it("keeps ETH a payee refuses for it to withdraw, so the order still settles", async function () {
    const wallet = await f.deploy("EthToggleWallet", [await filler.getAddress()]);
    const t = terms({ inputToken: NATIVE_TOKEN, outputToken: NATIVE_TOKEN, inputAmount: UNIT, outputAmount: UNIT / 2n });
    const { orderId, originData } = await open(t);
    await fill(orderId, originData, filler, AbiCoder.defaultAbiCoder().encode(["address"], [wallet.target]));
    await (await f.origin.settle(originData, await f.fillProof(orderId))).wait();
    expect(await f.origin.orderStatus(orderId)).to.equal(2n);
    expect(await f.origin.owed(wallet.target)).to.equal(UNIT);
    expect((await revertOf(f.origin.connect(other).getFunction("withdrawOwed").staticCall(), f.origin)).name).to.equal(
      "OriginSettler_NothingOwed",
    );
    const withdraw = f.origin.interface.encodeFunctionData("withdrawOwed");
    const asWallet = wallet.connect(filler) as Contract;
    expect((await revertOf(asWallet.execute.staticCall(f.origin.target, withdraw), f.origin)).name).to.equal("OriginSettler_PaymentFailed");
    await (await asWallet.setAccepting(true)).wait();
    await (await asWallet.execute(f.origin.target, withdraw)).wait();
    expect(await f.provider.getBalance(wallet.target)).to.equal(UNIT);
    expect(await f.origin.owed(wallet.target)).to.equal(0n);
  });

  describe("openFor: a gasless order on the user's Permit2 signature", function () {
    const gasless = async (overrides: Partial<GaslessOrder> = {}): Promise<GaslessOrder> => ({
      originSettler: f.origin.target as Address,
      user: (await user.getAddress()) as Address,
      nonce: BigInt(Math.floor(Math.random() * 2 ** 40)),
      originChainId: f.chainId,
      openDeadline: (await now()) + 600,
      fillDeadline: (await now()) + 3600,
      orderData: terms(),
      ...overrides,
    });
    const sign = async (order: GaslessOrder, signer: Signer = user) =>
      signer.signTypedData(
        permit2Domain(f.chainId),
        PERMIT2_ORDER_TYPES as unknown as Record<string, Array<{ name: string; type: string }>>,
        permit2OrderMessage(order),
      );

    before(async function () {
      await (await (f.inputToken.connect(user) as Contract).approve(PERMIT2_ADDRESS, MaxUint256)).wait();
    });

    it("opens the order a filler submits, once, with the id resolveFor gives", async function () {
      const order = await gasless();
      const signature = await sign(order);
      const resolved = await f.origin.resolveFor(gaslessOrderStruct(order), "0x");
      const before = await f.inputToken.balanceOf(f.origin.target);
      const receipt = await (await (f.origin.connect(filler) as Contract).openFor(gaslessOrderStruct(order), signature, "0x")).wait();
      const event = receipt.logs
        .map((log: { topics: string[]; data: string }) => f.origin.interface.parseLog(log))
        .find((e: { name: string } | null) => e?.name === "Open");
      expect(event.args.orderId).to.equal(resolved.orderId);
      expect(event.args.resolvedOrder.openDeadline).to.equal(BigInt(order.openDeadline));
      expect(decodeOriginData(event.args.resolvedOrder.fillInstructions[0].originData).gasless).to.equal(true);
      expect(await f.inputToken.balanceOf(f.origin.target)).to.equal(before + order.orderData.inputAmount);
      const replay = await revertOf(
        (f.origin.connect(filler) as Contract).openFor.staticCall(gaslessOrderStruct(order), signature, "0x"),
        f.origin,
      );
      expect(replay.name).to.equal("OriginSettler_OrderExists");
    });

    it("refuses another signer, changed terms, a passed open deadline, ETH input, another settler or chain", async function () {
      const origin = f.origin.connect(filler) as Contract;
      const order = await gasless();
      const byOther = await sign(order, other);
      const permit2 = new Interface(["error InvalidSigner()", "error InvalidNonce()", "error SignatureExpired(uint256)"]);
      expect((await revertOf(origin.openFor.staticCall(gaslessOrderStruct(order), byOther, "0x"), { interface: permit2 })).name).to.equal(
        "InvalidSigner",
      );
      const signature = await sign(order);
      const changed = { ...order, orderData: { ...order.orderData, outputAmount: 1n } };
      expect(
        (await revertOf(origin.openFor.staticCall(gaslessOrderStruct(changed), signature, "0x"), { interface: permit2 })).name,
      ).to.equal("InvalidSigner");
      const cases: Array<[string, GaslessOrder]> = [
        ["OriginSettler_OpenDeadlinePassed", await gasless({ openDeadline: (await now()) - 1 })],
        ["OriginSettler_NativeInputNotGasless", await gasless({ orderData: terms({ inputToken: NATIVE_TOKEN }) })],
        ["OriginSettler_WrongOriginSettler", await gasless({ originSettler: Wallet.createRandom().address as Address })],
        ["OriginSettler_WrongOriginChain", await gasless({ originChainId: 5n })],
      ];
      for (const [name, bad] of cases) {
        expect((await revertOf(origin.openFor.staticCall(gaslessOrderStruct(bad), await sign(bad), "0x"), f.origin)).name).to.equal(name);
      }
      // The good order still opens: nothing above consumed its nonce.
      await (await origin.openFor(gaslessOrderStruct(order), signature, "0x")).wait();
    });
  });

  it("a settlement estimated while its block is the current one still runs once L1Block has moved on", async function () {
    const { orderId, originData } = await open();
    await fill(orderId, originData);
    // The proof's block is current and recorded (as a keeper records each block): a wallet estimates now...
    const proof = await f.fillProof(orderId);
    const hashes = new Contract(await f.verifier.L1_BLOCK_HASHES(), ["function record() returns (uint64, bytes32)"], f.signers[0]);
    await (await hashes.getFunction("record")()).wait();
    const gasLimit = await (f.origin.connect(other) as Contract).settle.estimateGas(originData, proof);
    // ...and the transaction runs in a later L2 block, whose L1Block names a newer L1 block.
    await f.setL1Block(BigInt(await f.provider.getBlockNumber()));
    const receipt = await (await (f.origin.connect(other) as Contract).settle(originData, proof, { gasLimit })).wait();
    expect(receipt.status).to.equal(1);
    expect(await f.origin.orderStatus(orderId)).to.equal(2n);
  });

  it("a proof may be at any L1 block after the fill that the L2 knows, within the maximum proof age", async function () {
    expect(await f.origin.MAX_PROOF_AGE()).to.equal(MAX_PROOF_AGE);
    const { orderId, originData } = await open();
    await fill(orderId, originData);
    const proof = await f.fillProof(orderId);
    await increaseTime(MAX_PROOF_AGE + 1n);
    expect((await revertOf(f.origin.settle.staticCall(originData, proof), f.origin, f.verifier)).name).to.equal(
      "StorageProofVerifier_StaleHeader",
    );
    await (await f.origin.settle(originData, await f.fillProof(orderId))).wait();
    expect(await f.origin.orderStatus(orderId)).to.equal(2n);
  });
});
