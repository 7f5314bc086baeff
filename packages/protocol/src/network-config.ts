import { getAddress, isAddress, zeroAddress, type Address } from "viem";
import { z } from "zod";

/**
 * What the web app needs to know about a deployment: its two chains and the addresses of the contracts
 * it talks to. The server hands it out as `/config.json` (built from `.devnet/stack.json` locally, from
 * `networks/<name>.json` for the test networks); the app refuses to start on a file that fails this
 * schema and says which field is wrong. Shared by the app and the server that writes the file, so the
 * two cannot disagree on its shape.
 */
const address = z
  .string()
  .refine((value) => isAddress(value, { strict: false }), "must be a 0x-prefixed 20-byte address")
  .refine((value) => value.toLowerCase() !== zeroAddress, "is the zero address: this deployment's file is not filled in")
  .transform((value) => getAddress(value));

const chain = z.object({
  chainId: z.number().int().positive(),
  name: z.string().min(1),
  rpcUrl: z.url(),
  /** A block explorer's base URL, where the network has one. */
  explorerUrl: z.url().optional(),
  /** The first block worth scanning for this deployment's events (its deployment block). */
  fromBlock: z.number().int().nonnegative().default(0),
});

/**
 * A service's base URL. An empty one is refused with the same words as a zero address: the committed
 * network files carry the field empty until the live service exists.
 */
const serviceUrl = z
  .string()
  .refine((value) => value.trim() !== "", "is empty: this deployment's file is not filled in")
  .pipe(z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }))
  // The app appends its routes (`/credits/…`) to it.
  .transform((value) => value.replace(/\/+$/, ""));

/** Governance's addresses, all four or none (a deployment made before governance has none). */
const GOVERNANCE_ADDRESSES = [
  ["l1", "Governor"],
  ["l1", "Timelock"],
  ["l1", "L1CrossDomainMessenger"],
  ["l2", "GovernanceExecutor"],
] as const;

export const networkConfigSchema = z
  .object({
    /** A human name for the deployment ("Local devnet", "Test network"). */
    name: z.string().min(1),
    l1: chain.extend({
      /** Seconds per L1 block: turns the governor's block counts into time (12 on Ethereum, 2 on the devnet). */
      blockSeconds: z.number().positive().default(12),
    }),
    l2: chain.extend({ wsUrl: z.url().optional() }),
    contracts: z.object({
      l1: z.object({
        PrimaryToken: address,
        OptimismPortal: address,
        L2OutputOracle: address,
        L1StandardBridge: address,
        /** The protocol's governor (the primary token's votes) and the timelock it executes through. */
        Governor: address.optional(),
        Timelock: address.optional(),
        /** The OP L1 messenger: a proposal's one action sends the L2 batch through it. */
        L1CrossDomainMessenger: address.optional(),
        /** The intent layer's L1 side: solvers fill fast withdrawals there (with `l2.OriginSettler`, or neither). */
        DestinationSettler: address.optional(),
        /** Fast deposits' escrow (`L1OriginSettler`): opened and refunded there (with `l2.DestinationSettler`, or neither). */
        OriginSettler: address.optional(),
      }),
      l2: z.object({
        PrimaryToken: address,
        StakedToken: address,
        NodeLicense: address,
        NodeRegistry: address,
        VerificationRegistry: address,
        /** Epoch rewards split by quality of service (the Network page's claims); absent before they were deployed. */
        RewardPools: address.optional(),
        /** Runs the batches the L1 timelock sends; administers the L2 protocol contracts. */
        GovernanceExecutor: address.optional(),
        /** The credits channel's claim platform: vouchers are claimed there (with `credits.url`, or neither). */
        VoucherClaims: address.optional(),
        /** The intent layer's L2 side: fast withdrawals are opened (escrowed), settled and refunded there. */
        OriginSettler: address.optional(),
        /** Where solvers fill fast deposits (`L2DestinationSettler`; with `l1.OriginSettler`, or neither). */
        DestinationSettler: address.optional(),
      }),
    }),
    /**
     * The credits channel's service (the Credits page): where buyers' credits, the catalogue and their
     * vouchers are read, and redemptions sent. Given with `contracts.l2.VoucherClaims`, or neither.
     */
    credits: z.object({ url: serviceUrl }).optional(),
    /**
     * The intent layer's terms as the deployment's solver quotes them (the Bridge page's fast withdrawals):
     * `minFeeBps`, the least fee it fills for, in basis points of an order's input. Given only with the settlers;
     * without it the page asks the reference solver's default fee (`INTENT_DEFAULT_FEE_BPS`).
     */
    intents: z.object({ minFeeBps: z.number().int().min(0).max(9_999) }).optional(),
  })
  .superRefine((config, context) => {
    const missing = GOVERNANCE_ADDRESSES.filter(
      ([chain, name]) => (config.contracts[chain] as Record<string, unknown>)[name] === undefined,
    );
    if (missing.length === 0 || missing.length === GOVERNANCE_ADDRESSES.length) return;
    for (const [chain, name] of missing) {
      context.addIssue({
        code: "custom",
        path: ["contracts", chain, name],
        message: "is missing: governance needs all of Governor, Timelock, L1CrossDomainMessenger and GovernanceExecutor",
      });
    }
  })
  .superRefine((config, context) => {
    // The Credits page signs redemptions for the claim contract and claims there: one without the other is half a channel.
    const hasService = config.credits !== undefined;
    const hasContract = config.contracts.l2.VoucherClaims !== undefined;
    if (hasService && !hasContract)
      context.addIssue({
        code: "custom",
        path: ["contracts", "l2", "VoucherClaims"],
        message: "is missing: the credits service (credits.url) needs its claim contract",
      });
    if (hasContract && !hasService)
      context.addIssue({
        code: "custom",
        path: ["credits", "url"],
        message: "is missing: the claim contract (contracts.l2.VoucherClaims) needs its credits service",
      });
  })
  .superRefine((config, context) => {
    // An order opened on the L2 is filled through the L1 settler it names: one without the other is half a layer.
    const origin = config.contracts.l2.OriginSettler !== undefined;
    const destination = config.contracts.l1.DestinationSettler !== undefined;
    if (origin && !destination)
      context.addIssue({
        code: "custom",
        path: ["contracts", "l1", "DestinationSettler"],
        message: "is missing: the intent layer's OriginSettler (contracts.l2) needs its DestinationSettler",
      });
    if (destination && !origin)
      context.addIssue({
        code: "custom",
        path: ["contracts", "l2", "OriginSettler"],
        message: "is missing: the intent layer's DestinationSettler (contracts.l1) needs its OriginSettler",
      });
    if (config.intents !== undefined && !(origin && destination))
      context.addIssue({
        code: "custom",
        path: ["intents"],
        message: "is given without the intent layer's settlers (contracts.l2.OriginSettler, contracts.l1.DestinationSettler)",
      });
  })
  .superRefine((config, context) => {
    // Fast deposits: an order opened on L1 is filled through the L2 settler it names, the same pairing the other way.
    const origin = config.contracts.l1.OriginSettler !== undefined;
    const destination = config.contracts.l2.DestinationSettler !== undefined;
    if (origin && !destination)
      context.addIssue({
        code: "custom",
        path: ["contracts", "l2", "DestinationSettler"],
        message: "is missing: fast deposits' OriginSettler (contracts.l1) needs its DestinationSettler",
      });
    if (destination && !origin)
      context.addIssue({
        code: "custom",
        path: ["contracts", "l1", "OriginSettler"],
        message: "is missing: fast deposits' DestinationSettler (contracts.l2) needs its OriginSettler",
      });
  });

/** The fee a fast withdrawal offers when the settings name none: the reference solver's default (`SOLVER_MIN_FEE_BPS`), 1%. */
export const INTENT_DEFAULT_FEE_BPS = 100;

export type NetworkConfig = z.infer<typeof networkConfigSchema>;
export type NetworkConfigInput = z.input<typeof networkConfigSchema>;

/** Parses a configuration file's JSON, or throws one readable message naming every wrong field. */
export function parseNetworkConfig(json: unknown): NetworkConfig {
  const parsed = networkConfigSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(file)"} ${issue.message}`);
  throw new Error(`The network configuration is not usable: ${problems.join("; ")}`);
}

/** The address type the app's contract calls take. */
export type { Address };
