import { BridgeError } from "@avn/bridge";
import { Contract, type ContractTransactionResponse, JsonRpcProvider, NonceManager, Wallet, ZeroAddress } from "ethers";

import { encodeOrderData, NATIVE_TOKEN, ORDER_DATA_TYPE, OrderStatus } from "@avn/protocol/intents";
import type { IIntentDestinationSettler, IIntentOriginSettler } from "../../typechain-types/index.ts";
import { contractAt } from "../common/artifacts.ts";

/** How long the filler has: ten minutes, well within the settlers' one-day limit. */
export const FAST_TRANSFER_FILL_SECONDS = 600;

/**
 * The direction: a fast withdrawal escrows on the L2 (`OriginSettler`) and is paid on L1; a fast deposit escrows on
 * L1 (`L1OriginSettler`) and is paid on the L2.
 */
export type FastDirection = "withdraw" | "deposit";

export interface FastTransfer {
  direction: FastDirection;
  asset: "eth" | "token";
  /** The input escrowed on the origin chain, in base units. */
  amount: bigint;
  /** The filler's fee in basis points of the input: the recipient gets `amount × (10,000 − feeBps) / 10,000`. */
  feeBps: number;
  /** The recipient on the destination chain (default: the sender). */
  recipient?: string;
}

export type FastTransferStage =
  | { stage: "approved"; hash: string }
  | { stage: "opened"; orderId: string; hash: string; output: bigint; fillDeadline: number }
  | { stage: "filled"; repayTo: string; filledAt: bigint }
  | { stage: "settled" }
  | { stage: "refundable"; refundableAfter: number };

const ERC20 = [
  "function balanceOf(address) view returns (uint256)",
  "function allowance(address,address) view returns (uint256)",
  "function approve(address,uint256) returns (bool)",
];

/** The chains' names, origin first, for messages. */
export function chainNames(direction: FastDirection): { origin: string; destination: string } {
  return direction === "withdraw" ? { origin: "L2", destination: "L1" } : { origin: "L1", destination: "L2" };
}

/**
 * A fast transfer through the intent layer (docs/intents.md): opens an order in the origin chain's settler that
 * escrows `amount` and asks for the amount less the fee on the destination chain, then follows it block by block until
 * it is filled there (and, with `untilSettled`, settled on the origin chain: seconds for a withdrawal, the challenge
 * period for a deposit), or until its fill deadline and settlement window have passed unfilled (it is then
 * refundable). Reports each stage as it happens. Sends with the wallet's own estimates: no gas override.
 */
export async function fastTransfer(
  request: FastTransfer,
  chains: { l1RpcUrl: string; l2RpcUrl: string; originSettler: string; privateKey: string },
  options: { untilSettled: boolean; timeoutMs: number; onStage: (stage: FastTransferStage) => void },
): Promise<FastTransferStage> {
  const l1 = new JsonRpcProvider(chains.l1RpcUrl, undefined, { staticNetwork: true, pollingInterval: 500 });
  const l2 = new JsonRpcProvider(chains.l2RpcUrl, undefined, { staticNetwork: true, pollingInterval: 500 });
  const [originChain, destinationChain] = request.direction === "withdraw" ? [l2, l1] : [l1, l2];
  const names = chainNames(request.direction);
  try {
    const signer = new NonceManager(new Wallet(chains.privateKey, originChain));
    const user = await signer.getAddress();
    // Both origin settlers share this ABI (OriginSettlerBase's), and both destination settlers DestinationSettler's.
    const origin = contractAt<IIntentOriginSettler>("OriginSettler", chains.originSettler, signer, "intents");
    if ((await originChain.getCode(chains.originSettler)) === "0x")
      throw new BridgeError(
        "CONFIGURATION",
        `No origin settler at ${chains.originSettler} on the ${names.origin}: is the network's deployment current?`,
      );
    const [inputToken, outputToken, destinationChainId, destinationAddress] =
      request.asset === "eth"
        ? [NATIVE_TOKEN, NATIVE_TOKEN, await origin.DESTINATION_CHAIN_ID(), await origin.DESTINATION_SETTLER()]
        : [
            await origin.INPUT_TOKEN(),
            await origin.OUTPUT_TOKEN(),
            await origin.DESTINATION_CHAIN_ID(),
            await origin.DESTINATION_SETTLER(),
          ];
    const output = (request.amount * BigInt(10_000 - request.feeBps)) / 10_000n;
    if (output === 0n) throw new BridgeError("INVALID_ARGUMENT", "--amount is too small: nothing would be left after the fee");
    const terms = {
      inputToken,
      inputAmount: request.amount,
      outputToken,
      outputAmount: output,
      recipient: (request.recipient ?? user) as `0x${string}`,
      destinationChainId,
    } as Parameters<typeof encodeOrderData>[0];
    await checkFunds(originChain, signer, user, request, inputToken, chains.originSettler, options.onStage);
    // The fill is checked against the destination's clock and the refund against the origin's: count from the later
    // of the two (they agree within seconds live; a devnet's L1 time can be moved ahead on its own), within the
    // settler's limit.
    const [destinationLatest, originLatest, maxFillPeriod] = await Promise.all([
      destinationChain.getBlock("latest"),
      originChain.getBlock("latest"),
      origin.MAX_FILL_PERIOD(),
    ]);
    const fillDeadline = Math.min(
      Math.max(destinationLatest!.timestamp, originLatest!.timestamp) + FAST_TRANSFER_FILL_SECONDS,
      originLatest!.timestamp + Number(maxFillPeriod),
    );
    const order = { fillDeadline, orderDataType: ORDER_DATA_TYPE, orderData: encodeOrderData(terms) };
    const tx = await origin.open(order, { value: request.asset === "eth" ? request.amount : 0n });
    const receipt = (await tx.wait())!;
    const opened = receipt.logs.map((log) => origin.interface.parseLog(log)).find((parsed) => parsed?.name === "Open")!;
    const orderId = opened.args.orderId as string;
    options.onStage({ stage: "opened", orderId, hash: tx.hash, output, fillDeadline });
    const destination = contractAt<IIntentDestinationSettler>("DestinationSettler", destinationAddress, destinationChain, "intents");
    return await follow({
      originChain,
      origin,
      destination,
      orderId,
      fillDeadline,
      untilSettled: options.untilSettled,
      timeoutMs: options.timeoutMs,
      onStage: options.onStage,
    });
  } finally {
    l1.destroy();
    l2.destroy();
  }
}

/** Refuses a transfer the sender cannot pay before anything is sent, and approves the settler for a token input once. */
async function checkFunds(
  originChain: JsonRpcProvider,
  signer: NonceManager,
  user: string,
  request: FastTransfer,
  inputToken: string,
  originSettler: string,
  onStage: (stage: FastTransferStage) => void,
): Promise<void> {
  const chain = chainNames(request.direction).origin;
  if (request.asset === "eth") {
    const balance = await originChain.getBalance(user);
    if (balance < request.amount)
      throw new BridgeError("INSUFFICIENT_BALANCE", `The ${chain} balance is ${balance} wei, less than the ${request.amount} to send`);
    return;
  }
  const erc20 = new Contract(inputToken, ERC20, signer);
  const balance = (await erc20.getFunction("balanceOf")(user)) as bigint;
  if (balance < request.amount)
    throw new BridgeError(
      "INSUFFICIENT_BALANCE",
      `The ${chain} balance is ${balance} base units of the primary token, less than ${request.amount}`,
    );
  if (((await erc20.getFunction("allowance")(user, originSettler)) as bigint) >= request.amount) return;
  // Exactly the input, as the SDK and the web app approve: no standing allowance is left behind.
  const approval = (await erc20.getFunction("approve")(originSettler, request.amount)) as ContractTransactionResponse;
  await approval.wait();
  onStage({ stage: "approved", hash: approval.hash });
}

/** Follows an opened order on each new block of its origin chain until it reaches the stage asked for, or can no longer. */
async function follow(input: {
  originChain: JsonRpcProvider;
  origin: IIntentOriginSettler;
  destination: IIntentDestinationSettler;
  orderId: string;
  fillDeadline: number;
  untilSettled: boolean;
  timeoutMs: number;
  onStage: (stage: FastTransferStage) => void;
}): Promise<FastTransferStage> {
  const { originChain, origin, destination, orderId } = input;
  const window = Number(await origin.SETTLEMENT_WINDOW());
  let filled = false;
  return await new Promise<FastTransferStage>((resolve, reject) => {
    let checking = false;
    const finish = (outcome: () => void) => {
      clearTimeout(timer);
      void originChain.off("block", onBlock);
      outcome();
    };
    const check = async () => {
      if (checking) return;
      checking = true;
      try {
        if (!filled) {
          const [repayTo, filledAt] = await destination.fills(orderId);
          if (repayTo !== ZeroAddress) {
            filled = true;
            const stage: FastTransferStage = { stage: "filled", repayTo, filledAt };
            input.onStage(stage);
            if (!input.untilSettled) return finish(() => resolve(stage));
          }
        }
        const status = Number(await origin.orderStatus(orderId));
        if (status === OrderStatus.settled) {
          const stage: FastTransferStage = { stage: "settled" };
          input.onStage(stage);
          return finish(() => resolve(stage));
        }
        const now = (await originChain.getBlock("latest"))!.timestamp;
        if (!filled && now > input.fillDeadline + window) {
          const stage: FastTransferStage = { stage: "refundable", refundableAfter: input.fillDeadline + window };
          input.onStage(stage);
          return finish(() => resolve(stage));
        }
      } catch (error) {
        finish(() => reject(error instanceof Error ? error : new Error(String(error))));
      } finally {
        checking = false;
      }
    };
    const timer = setTimeout(
      () =>
        finish(() => reject(new BridgeError("TIMEOUT", `Order ${orderId} was not ${input.untilSettled ? "settled" : "filled"} in time`))),
      input.timeoutMs,
    );
    // Each new block of the origin chain asks again (ethers' block event); the first look is now.
    const onBlock = () => void check();
    void originChain.on("block", onBlock);
    void check();
  });
}
