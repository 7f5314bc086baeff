import { encodeAbiParameters, encodeFunctionData, pad, type Hex } from "viem";
import { describe, expect, it } from "vitest";

import { encodeOrderData, encodeOriginData, NATIVE_TOKEN, ORDER_DATA_TYPE, orderIdOf, type OriginData } from "@avn/protocol/intents";
import { INTENT_DEFAULT_FEE_BPS, type NetworkConfig } from "@avn/protocol/network-config";
import { decodedText, decodeInput, decodeLog } from "../src/explorer/decode";
import { intentSummaries } from "../src/explorer/intents";
import { destinationSettlerAbi, l1OriginSettlerAbi, originSettlerAbi } from "../src/generated/intent-abis";
import { fastFillDeadline, fastQuote, intentSettings, orderAssetName, orderPhase, orderTokens } from "../src/lib/intents";
import { encodedLog } from "./encoded-log";
import { address } from "./governance-fixtures";

const ORIGIN = address(0x0a);
const DESTINATION = address(0x0d);
const DEPOSIT_ORIGIN = address(0x1a);
const DEPOSIT_DESTINATION = address(0x1d);
const USER = address(0x05);
const SOLVER = address(0x50);
const REPAY = address(0x51);
const L1_TOKEN = address(0x11);
const L2_TOKEN = address(0x21);

const config = {
  name: "test",
  l1: { chainId: 900, name: "L1", rpcUrl: "http://l1", fromBlock: 0, blockSeconds: 2 },
  l2: { chainId: 901, name: "L2", rpcUrl: "http://l2", fromBlock: 0 },
  contracts: {
    l1: {
      PrimaryToken: L1_TOKEN,
      OptimismPortal: address(0x12),
      L2OutputOracle: address(0x13),
      L1StandardBridge: address(0x14),
      DestinationSettler: DESTINATION,
    },
    l2: {
      PrimaryToken: L2_TOKEN,
      StakedToken: address(0x22),
      NodeLicense: address(0x23),
      NodeRegistry: address(0x24),
      VerificationRegistry: address(0x25),
      OriginSettler: ORIGIN,
    },
  },
} as NetworkConfig;

/** A token order of the user's, 100 primary tokens for 99 on L1, as `open` makes it (nonce 3). */
const ORDER: OriginData = {
  originChainId: 901n,
  originSettler: ORIGIN,
  user: USER,
  nonce: 3n,
  gasless: false,
  fillDeadline: 1_000_600,
  inputToken: L2_TOKEN,
  inputAmount: 100n * 10n ** 18n,
  outputToken: L1_TOKEN,
  outputAmount: 99n * 10n ** 18n,
  recipient: USER,
  destinationChainId: 900n,
  destinationSettler: DESTINATION,
};
const ORIGIN_DATA = encodeOriginData(ORDER);
const ORDER_ID = orderIdOf(ORIGIN_DATA);

/** The `Open` event the origin settler emits for ORDER (ERC-7683's resolved order). */
const openLog = (address = ORIGIN) => {
  const output = { token: pad(L1_TOKEN), amount: ORDER.outputAmount, recipient: pad(USER), chainId: 900n };
  return encodedLog(
    originSettlerAbi,
    "Open",
    {
      orderId: ORDER_ID,
      resolvedOrder: {
        user: USER,
        originChainId: 901n,
        openDeadline: 2 ** 32 - 1,
        fillDeadline: ORDER.fillDeadline,
        orderId: ORDER_ID,
        maxSpent: [output],
        minReceived: [{ token: pad(L2_TOKEN), amount: ORDER.inputAmount, recipient: pad("0x00"), chainId: 901n }],
        fillInstructions: [{ destinationChainId: 900n, destinationSettler: pad(DESTINATION), originData: ORIGIN_DATA }],
      },
    },
    { address, logIndex: 1 },
  );
};
const openInput = encodeFunctionData({
  abi: originSettlerAbi,
  functionName: "open",
  args: [{ fillDeadline: ORDER.fillDeadline, orderDataType: ORDER_DATA_TYPE, orderData: encodeOrderData(ORDER) }],
});

describe("fast withdrawals: the quote and the settings", () => {
  it("pays the input less the fee, rounded down, so the fee always meets the solver's rate", () => {
    expect(fastQuote(100n * 10n ** 18n, 100)).toEqual({ output: 99n * 10n ** 18n, fee: 10n ** 18n });
    // 199 × 0.99 = 197.01: the output is rounded down, the fee up.
    expect(fastQuote(199n, 100)).toEqual({ output: 197n, fee: 2n });
    expect(fastQuote(1n, 100)).toEqual({ output: 0n, fee: 1n });
    for (const input of [1n, 99n, 101n, 12_345n, 10n ** 18n + 7n, 3n * 10n ** 21n + 1n])
      for (const bps of [0, 1, 100, 250, 9_999]) {
        const { output, fee } = fastQuote(input, bps);
        expect(output + fee).toBe(input);
        // The solver's own check (src/solver/policy.ts).
        expect(fee * 10_000n >= BigInt(bps) * input).toBe(true);
        expect((fee - 1n) * 10_000n < BigInt(bps) * input || fee === 0n).toBe(true);
      }
  });

  it("takes the settlers and the solver's fee from the settings, the reference solver's default without one", () => {
    expect(intentSettings(config)).toEqual({
      direction: "withdraw",
      origin: "l2",
      destination: "l1",
      originSettler: ORIGIN,
      destinationSettler: DESTINATION,
      feeBps: INTENT_DEFAULT_FEE_BPS,
      feeFromSettings: false,
    });
    expect(intentSettings({ ...config, intents: { minFeeBps: 250 } })?.feeBps).toBe(250);
    const without = { ...config, contracts: { ...config.contracts, l2: { ...config.contracts.l2, OriginSettler: undefined } } };
    expect(intentSettings(without)).toBeUndefined();
    // Fast deposits: their own pair of settlers, the other way round, and none named means none offered.
    expect(intentSettings(config, "deposit")).toBeUndefined();
    const withDeposits = {
      ...config,
      contracts: {
        l1: { ...config.contracts.l1, OriginSettler: DEPOSIT_ORIGIN },
        l2: { ...config.contracts.l2, DestinationSettler: DEPOSIT_DESTINATION },
      },
    };
    expect(intentSettings(withDeposits, "deposit")).toMatchObject({
      direction: "deposit",
      origin: "l1",
      destination: "l2",
      originSettler: DEPOSIT_ORIGIN,
      destinationSettler: DEPOSIT_DESTINATION,
    });
    expect(intentSettings(withDeposits)?.originSettler).toBe(ORIGIN);
  });

  it("sets the fill deadline ten minutes after the later clock, within the settler's longest fill period", () => {
    const day = 86_400n;
    expect(fastFillDeadline({ destinationTime: 1_000n, originTime: 1_002n, maxFillPeriod: day })).toBe(1_602);
    // The L1 an hour ahead (a devnet's moved time): the deadline is still ten minutes ahead on L1, where the fill is checked.
    expect(fastFillDeadline({ destinationTime: 4_600n, originTime: 1_000n, maxFillPeriod: day })).toBe(5_200);
    expect(fastFillDeadline({ destinationTime: 1_000n + 2n * day, originTime: 1_000n, maxFillPeriod: day })).toBe(1_000 + 86_400);
  });

  it("maps ETH to ETH and one chain's primary token to the other's, each way", () => {
    expect(orderTokens("eth", config)).toEqual({ input: NATIVE_TOKEN, output: NATIVE_TOKEN });
    expect(orderTokens("token", config)).toEqual({ input: L2_TOKEN, output: L1_TOKEN });
    expect(orderTokens("token", config, "deposit")).toEqual({ input: L1_TOKEN, output: L2_TOKEN });
    expect(orderTokens("eth", config, "deposit")).toEqual({ input: NATIVE_TOKEN, output: NATIVE_TOKEN });
    expect([orderAssetName(NATIVE_TOKEN, "l1", config), orderAssetName(L1_TOKEN, "l1", config)]).toEqual(["ETH", "Primary token"]);
    expect(orderAssetName(L1_TOKEN, "l2", config)).toBe(`Token ${L1_TOKEN}`);
  });
});

describe("fast withdrawals: an order's phase", () => {
  const timing = { fillDeadline: 1_000, settlementWindow: 120n };
  const open = (originTime: bigint, filledAt?: bigint) => orderPhase({ status: "open", originTime, filledAt }, timing);

  it("waits for its fill until the deadline's own second, then is expired until the settlement window has passed", () => {
    expect(open(400n)).toEqual({ phase: "waiting-for-fill", secondsToDeadline: 600 });
    expect(open(1_000n)).toEqual({ phase: "waiting-for-fill", secondsToDeadline: 0 });
    expect(open(1_001n)).toEqual({ phase: "expired", secondsToRefund: 120 });
    // `refund` needs block.timestamp > deadline + window.
    expect(open(1_120n)).toEqual({ phase: "expired", secondsToRefund: 1 });
    expect(open(1_121n)).toEqual({ phase: "refundable" });
  });

  it("is settling once filled on L1, late (no refund offered) past the window, and final once settled or refunded", () => {
    expect(open(1_050n, 990n)).toEqual({ phase: "filled" });
    expect(open(1_121n, 990n)).toEqual({ phase: "filled-late" });
    expect(orderPhase({ status: "settled", originTime: 5_000n, filledAt: 990n }, timing)).toEqual({ phase: "settled" });
    expect(orderPhase({ status: "refunded", originTime: 5_000n }, timing)).toEqual({ phase: "refunded" });
    expect(orderPhase({ status: "unknown", originTime: 5n }, timing)).toEqual({ phase: "unknown" });
    // Without its deadline (an id alone), an open order is waiting or filled.
    expect(orderPhase({ status: "open", originTime: 9_999n })).toEqual({ phase: "waiting-for-fill" });
  });
});

describe("the explorer's intent orders", () => {
  const l2 = { origin: ORIGIN };
  const l1 = { destination: DESTINATION };

  it("describes an open from its Open event, the order's terms from its origin data", () => {
    const [summary, ...rest] = intentSummaries({ from: USER, to: ORIGIN, input: openInput }, [openLog()], l2);
    expect(rest).toEqual([]);
    expect(summary).toMatchObject({ step: "open", orderId: ORDER_ID, callOnly: false });
    expect(summary.order).toMatchObject({ inputAmount: ORDER.inputAmount, outputAmount: ORDER.outputAmount, recipient: USER, user: USER });
    expect(summary.order?.fillDeadline).toBe(ORDER.fillDeadline);
    // The generic decoding names the call and the event too.
    expect(decodeInput(openInput)?.name).toBe("open");
    expect(decodeLog(openLog())?.name).toBe("Open");
  });

  it("describes an open that failed from its call alone, without an id (the settler assigns its nonce)", () => {
    const [summary] = intentSummaries({ from: USER, to: ORIGIN, input: openInput }, [], l2);
    expect(summary).toMatchObject({ step: "open", callOnly: true });
    expect(summary.orderId).toBeUndefined();
    expect(summary.order).toMatchObject({
      inputToken: L2_TOKEN,
      outputAmount: ORDER.outputAmount,
      fillDeadline: ORDER.fillDeadline,
      user: USER,
    });
  });

  it("describes a fill with its Filled event and the terms of the call's origin data", () => {
    const fillerData = encodeAbiParameters([{ type: "address" }], [REPAY]);
    const input = encodeFunctionData({ abi: destinationSettlerAbi, functionName: "fill", args: [ORDER_ID, ORIGIN_DATA, fillerData] });
    const filled = encodedLog(
      destinationSettlerAbi,
      "Filled",
      { orderId: ORDER_ID, filler: SOLVER, repayTo: REPAY, recipient: USER },
      { address: DESTINATION, logIndex: 0 },
    );
    const [summary] = intentSummaries({ from: SOLVER, to: DESTINATION, input }, [filled], l1);
    expect(summary).toMatchObject({ step: "fill", orderId: ORDER_ID, filler: SOLVER, repayTo: REPAY, callOnly: false });
    expect(summary.order?.recipient).toBe(USER);
    expect(decodedText(decodeLog(filled)!)).toBe(`Filled(${ORDER_ID}, ${SOLVER}, ${REPAY}, ${USER})`);
    // Empty filler data repays the sender.
    const plain = encodeFunctionData({ abi: destinationSettlerAbi, functionName: "fill", args: [ORDER_ID, ORIGIN_DATA, "0x"] });
    expect(intentSummaries({ from: SOLVER, to: DESTINATION, input: plain }, [], l1)[0].repayTo).toBe(SOLVER);
  });

  it("describes a settlement and a refund, by the id their origin data hashes to", () => {
    const proof: Hex = "0x1234";
    const settle = encodeFunctionData({ abi: originSettlerAbi, functionName: "settle", args: [ORIGIN_DATA, proof] });
    const settled = encodedLog(
      originSettlerAbi,
      "Settled",
      { orderId: ORDER_ID, filler: REPAY, l1BlockNumber: 77n },
      { address: ORIGIN, logIndex: 3 },
    );
    const [settlement] = intentSummaries({ from: SOLVER, to: ORIGIN, input: settle }, [settled], l2);
    expect(settlement).toMatchObject({ step: "settle", orderId: ORDER_ID, filler: REPAY, l1BlockNumber: 77n, callOnly: false });
    expect(settlement.order?.inputAmount).toBe(ORDER.inputAmount);

    const refund = encodeFunctionData({ abi: originSettlerAbi, functionName: "refund", args: [ORIGIN_DATA] });
    const refunded = encodedLog(originSettlerAbi, "Refunded", { orderId: ORDER_ID, user: USER }, { address: ORIGIN, logIndex: 0 });
    expect(intentSummaries({ from: USER, to: ORIGIN, input: refund }, [refunded], l2)[0]).toMatchObject({
      step: "refund",
      orderId: ORDER_ID,
      refundedTo: USER,
    });
    // A refund refused (too early): the call alone, with its id.
    expect(intentSummaries({ from: USER, to: ORIGIN, input: refund }, [], l2)[0]).toMatchObject({ orderId: ORDER_ID, callOnly: true });
  });

  it("describes a fast deposit's settlement on L1: SettledByMessage in the relay of its report, a call to another contract", () => {
    const settled = encodedLog(
      l1OriginSettlerAbi,
      "SettledByMessage",
      { orderId: ORDER_ID, filler: REPAY },
      { address: DEPOSIT_ORIGIN, logIndex: 2 },
    );
    const skipped = encodedLog(
      l1OriginSettlerAbi,
      "ReportSkipped",
      { orderId: ORDER_ID, status: 2 },
      { address: DEPOSIT_ORIGIN, logIndex: 3 },
    );
    // The relay is the portal's finalization: its call is not the settler's.
    const relay = { from: SOLVER, to: address(0x77), input: "0xabcdef" as Hex };
    const l1Settlers = { origin: DEPOSIT_ORIGIN, destination: DESTINATION };
    expect(intentSummaries(relay, [settled, skipped], l1Settlers)).toEqual([
      { step: "settle", orderId: ORDER_ID, filler: REPAY, callOnly: false },
    ]);
    expect(decodedText(decodeLog(settled)!)).toBe(`SettledByMessage(${ORDER_ID}, ${REPAY})`);
    // The same event from an address that is not the L1 origin settler is not this system's.
    expect(intentSummaries(relay, [settled], { destination: DESTINATION })).toEqual([]);
  });

  it("ignores look-alike events of another contract and calls to other addresses", () => {
    expect(intentSummaries({ from: USER, to: address(0x99), input: openInput }, [openLog(address(0x99))], l2)).toEqual([]);
    // The L2 settler's address on L1 is nobody's settler.
    expect(intentSummaries({ from: USER, to: ORIGIN, input: openInput }, [openLog()], l1)).toEqual([]);
  });
});
