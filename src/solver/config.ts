import { getAddress, isAddress, isHexString, parseEther, parseUnits } from "ethers";
import { z } from "zod";

import { logLevel, rpcUrl, wsRpcUrl } from "../common/config-fields.ts";
import { redactConfig, secret } from "../common/config-redaction.ts";
import { parseEnvironment } from "../common/environment.ts";
import type { SolverPolicy } from "./policy.ts";
import type { RebalancePolicy } from "./rebalancer.ts";

const address = () =>
  z
    .string()
    .refine((value) => isAddress(value), "not an EVM address")
    .transform((value) => getAddress(value));
/** An amount in whole units with up to 18 decimals (`1.5`), as base units. */
const amount = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine((value) => /^\d+(\.\d{1,18})?$/.test(value), "a decimal amount such as 1.5")
    .transform((value) => parseEther(value));
const flag = () =>
  z
    .enum(["true", "false", "1", "0"])
    .default("false")
    .transform((value) => value === "true" || value === "1");

const schema = z
  .object({
    /** The solver's key: the same account fills on L1, is repaid on the L2 and rebalances through the bridge. */
    SOLVER_KEY: secret(z.string().refine((value) => isHexString(value, 32), "a private key: 0x and 64 hex digits")),
    L1_RPC_URL: rpcUrl(),
    L2_RPC_URL: rpcUrl(),
    /** Each new L2 block wakes the solver (an `eth_subscribe` `newHeads` subscription). */
    L2_WS_URL: wsRpcUrl(),
    /** Optional: each new L1 block wakes the solver too, so that a fast deposit is filled at the next L2 block. */
    L1_WS_URL: wsRpcUrl().optional(),
    /** The L2's `OriginSettler`; the destination settler, the tokens and the verifier are read from it. */
    ORIGIN_SETTLER: address(),
    /** The journal lives here (`journal.sqlite`): a volume, so that a restart settles what was filled. */
    SOLVER_STATE_DIR: z.string().min(1),
    /** The least fee, in basis points of an order's input: 100 fills orders that pay out at most 99%. */
    SOLVER_MIN_FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(100),
    /** The highest L1 gas price the solver fills at, in gwei. */
    SOLVER_MAX_L1_GAS_PRICE_GWEI: z
      .string()
      .default("100")
      .refine((value) => /^\d+(\.\d{1,9})?$/.test(value), "a decimal number of gwei")
      .transform((value) => parseUnits(value, "gwei")),
    /** Orders whose fill deadline is nearer than this (seconds of L1 time) are left. */
    SOLVER_MIN_SECONDS_LEFT: z.coerce.number().int().min(0).max(86_400).default(60),
    /** ETH kept on L1 for the fills' gas, never paid out. */
    SOLVER_L1_GAS_RESERVE_ETH: amount("0.05"),
    /** ETH kept on the L2 for the gas of fast deposits' fills, settlements and reports, never paid out. */
    SOLVER_L2_GAS_RESERVE_ETH: amount("0.05"),
    /**
     * The L1's `OriginSettler` (an `L1OriginSettler`): set, the solver also fills fast deposits (L1 → L2) from its L2
     * inventory, reports its fills and finalizes the reports on L1 (needs SOLVER_OP_CHAIN_CONFIG).
     */
    L1_ORIGIN_SETTLER: address().optional(),
    /**
     * Fast deposits: how long a fill may wait to be reported, in seconds of L2 time, so that one report (up to 50
     * fills) carries several. A report's L1 proof and finalization are paid once per report, and its repayment waits
     * for the challenge period anyway: ten minutes more of it cost the solver nothing but batch its gas. 0 reports
     * each fill at once (the local stack's).
     */
    SOLVER_REPORT_DELAY_SECONDS: z.coerce.number().int().min(0).max(86_400).default(600),
    /** How far back, in L2 blocks, the first run (an empty journal) looks for open orders: a day at 2 s blocks. */
    SOLVER_FIRST_LOOKBACK_BLOCKS: z.coerce.number().int().min(0).default(43_200),
    /** Move earnings back to L1 through the standard bridge when a side runs low. */
    SOLVER_REBALANCE: flag(),
    /**
     * With SOLVER_REBALANCE: a JSON file naming the OP chain's L1 contracts (the format of
     * deploy/op-chains/example.json; deploy/op-chains/l2Testnet.json for the live network).
     */
    SOLVER_OP_CHAIN_CONFIG: z.string().min(1).optional(),
    SOLVER_LOW_WATER_ETH: amount("1"),
    SOLVER_LOW_WATER_TOKEN: amount("1000"),
    SOLVER_KEEP_L2_ETH: amount("0.1"),
    SOLVER_MIN_WITHDRAWAL_ETH: amount("0.1"),
    SOLVER_MIN_WITHDRAWAL_TOKEN: amount("100"),
    LOG_LEVEL: logLevel(),
  })
  .superRefine((config, context) => {
    if (config.SOLVER_REBALANCE && config.SOLVER_OP_CHAIN_CONFIG === undefined)
      context.addIssue({ code: "custom", path: ["SOLVER_OP_CHAIN_CONFIG"], message: "required with SOLVER_REBALANCE" });
    if (config.L1_ORIGIN_SETTLER !== undefined && config.SOLVER_OP_CHAIN_CONFIG === undefined)
      context.addIssue({ code: "custom", path: ["SOLVER_OP_CHAIN_CONFIG"], message: "required with L1_ORIGIN_SETTLER" });
  });

export type SolverConfig = Readonly<z.infer<typeof schema>>;

/** Parses the solver's configuration from the environment; every problem is listed at once. */
export function loadSolverConfig(env: NodeJS.ProcessEnv): SolverConfig {
  return parseEnvironment(schema, env, "solver configuration");
}

/** The configuration as it may be logged: the key never, the RPC URLs by origin. */
export function redactedSolverConfig(config: SolverConfig): Record<string, unknown> {
  return redactConfig(schema, config);
}

export function solverPolicy(config: SolverConfig): SolverPolicy {
  return {
    minFeeBps: config.SOLVER_MIN_FEE_BPS,
    maxL1GasPrice: config.SOLVER_MAX_L1_GAS_PRICE_GWEI,
    minSecondsLeft: config.SOLVER_MIN_SECONDS_LEFT,
    l1GasReserve: config.SOLVER_L1_GAS_RESERVE_ETH,
    l2GasReserve: config.SOLVER_L2_GAS_RESERVE_ETH,
  };
}

export function rebalancePolicy(config: SolverConfig): RebalancePolicy {
  return {
    lowWater: { eth: config.SOLVER_LOW_WATER_ETH, token: config.SOLVER_LOW_WATER_TOKEN },
    keepOnL2: { eth: config.SOLVER_KEEP_L2_ETH, token: 0n },
    minWithdrawal: { eth: config.SOLVER_MIN_WITHDRAWAL_ETH, token: config.SOLVER_MIN_WITHDRAWAL_TOKEN },
  };
}
