import { NATIVE_TOKEN, type OriginData } from "@avn/protocol/intents";

/** What the solver fills (settings: src/solver/config.ts). */
export interface SolverPolicy {
  /** The least fee an order must leave, in basis points of its input: 100 fills orders paying out at most 99%. */
  minFeeBps: number;
  /** The highest L1 gas price, in wei, at which the solver fills. */
  maxL1GasPrice: bigint;
  /** An order whose fill deadline is nearer than this is left: a fill sent now might land after it. */
  minSecondsLeft: number;
  /** ETH kept on L1 for the fills' gas, never paid out. */
  l1GasReserve: bigint;
  /** ETH kept on the L2 for the fills (of fast deposits), settlements and reports' gas, never paid out. */
  l2GasReserve: bigint;
}

/**
 * What the solver knows when it quotes an order of one direction: the destination chain's time, the L1 gas price,
 * its inventory on the destination chain, the tokens it deals in.
 */
export interface QuoteContext {
  now: number;
  l1GasPrice: bigint;
  /** The solver's balances on the destination chain (ETH and its primary token) less what its fills in flight will pay. */
  inventory: { eth: bigint; token: bigint };
  /** The origin chain's primary token (an input) and the destination chain's (its output). */
  tokens: { input: string; output: string };
  /** Wei the fill and the settlement will cost on both chains, for an ETH order's fee to cover. */
  gasCost: bigint;
  /** ETH on the destination chain that is never paid out (its gas). */
  gasReserve: bigint;
}

/** `retry`: the reason may pass (gas price, inventory), so the order is asked about again at the next block. */
export type Quote = { fill: true; fee: bigint } | { fill: false; reason: string; retry?: boolean };

/**
 * Whether filling `order` pays, and why not. Only like for like: ETH for ETH, one chain's primary token for the
 * other's (a swap would need a price, which this solver does not have). The fee is the input less the output. An ETH
 * order's fee must also cover the gas the solver spends on it; a token order's fee is in tokens, which the solver
 * cannot price in ETH, so for those the gas policy is the price cap alone.
 */
export function quote(order: OriginData, context: QuoteContext, policy: SolverPolicy): Quote {
  const sameAsset = (a: string, b: string, input: string, output: string) =>
    a.toLowerCase() === input.toLowerCase() && b.toLowerCase() === output.toLowerCase();
  const eth = sameAsset(order.inputToken, order.outputToken, NATIVE_TOKEN, NATIVE_TOKEN);
  const token = sameAsset(order.inputToken, order.outputToken, context.tokens.input, context.tokens.output);
  if (!eth && !token) return { fill: false, reason: "not like for like (the solver has no price for a swap)" };
  if (order.fillDeadline < context.now + policy.minSecondsLeft) return { fill: false, reason: "too near its fill deadline" };
  if (order.outputAmount >= order.inputAmount) return { fill: false, reason: "pays out all of its input or more" };
  const fee = order.inputAmount - order.outputAmount;
  if (fee * 10_000n < BigInt(policy.minFeeBps) * order.inputAmount) return { fill: false, reason: `fee below ${policy.minFeeBps} bps` };
  if (context.l1GasPrice > policy.maxL1GasPrice) return { fill: false, reason: "L1 gas price above the cap", retry: true };
  if (eth && fee < context.gasCost) return { fill: false, reason: "fee below the gas cost" };
  const available = eth ? context.inventory.eth - context.gasReserve : context.inventory.token;
  if (available < order.outputAmount) return { fill: false, reason: "not enough inventory on the destination chain", retry: true };
  return { fill: true, fee };
}
