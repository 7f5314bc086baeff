/**
 * The contracts' enums and ids as TypeScript sees them, written once. `test/ts/repository/ProtocolConstants.ts` checks
 * each against the compiled contracts (their ASTs), so a reordered enum or a changed constant fails a test
 * instead of silently changing what the node, the API or the scripts mean.
 *
 * Values that come back from a contract call as `uint8` arrive as bigint through ethers, so the job
 * statuses are bigints; values that go into a call or an attestation are numbers.
 */

/** The source chains of jobs and attestations (`VerificationRegistry._CHAIN_*`, `AttestationVerifier`). */
export const SourceChain = { ethereum: 0, solana: 1 } as const;
export type SourceChain = (typeof SourceChain)[keyof typeof SourceChain];

/** `IVerificationRegistry.JobStatus`. `none` marks an id never issued. */
export const JobStatus = { none: 0n, open: 1n, finalized: 2n, expired: 3n } as const;
export type JobStatus = (typeof JobStatus)[keyof typeof JobStatus];

/** `IVerificationRegistry.IgnoreReason`: why the registry skipped a submission instead of recording it. */
export const IgnoreReason = {
  jobFinalized: 0,
  jobExpired: 1,
  deadlinePassed: 2,
  voteLimitReached: 3,
  licenseNotLive: 4,
  alreadyVoted: 5,
} as const;
export type IgnoreReason = (typeof IgnoreReason)[keyof typeof IgnoreReason];

/** `VerificationRegistry.MAX_VOTES_PER_JOB`: the most votes a finalization can settle. */
export const MAX_VOTES_PER_JOB = 16n;

/** `QosReports.MAX_PEER_OBSERVATIONS`: the most peer licenses one QoS report lists. */
export const MAX_PEER_OBSERVATIONS = 128;

/** `IVoucherClaims.ItemKind`, by index: how the claim platform delivers an item. */
export const ITEM_KINDS = ["None", "Transfer", "StakeFor", "NftInventory", "Mint"] as const;
export const ItemKind = indexByName(ITEM_KINDS);

/** OpenZeppelin's `IGovernor.ProposalState`, by index. */
export const PROPOSAL_STATES = ["Pending", "Active", "Canceled", "Defeated", "Succeeded", "Queued", "Expired", "Executed"] as const;
export const ProposalState = indexByName(PROPOSAL_STATES);

/** `IStakedToken.RedemptionStatus`, by index. */
export const REDEMPTION_STATUSES = ["None", "Pending", "Cancelled", "Completed"] as const;
export const RedemptionStatus = indexByName(REDEMPTION_STATUSES);

/** The governor's vote types (`GovernorCountingSimple.VoteType`). */
export const SUPPORT = { against: 0, for: 1, abstain: 2 } as const;

/** `{ None: 0, Transfer: 1, … }` from an enum's member names in order: the names stay the one copy. */
function indexByName<const Names extends readonly string[]>(names: Names): { readonly [Name in Names[number]]: number } {
  return Object.fromEntries(names.map((name, index) => [name, index])) as { readonly [Name in Names[number]]: number };
}

/**
 * Multicall3 at its canonical address, the same on every chain (OP preinstalls it on L2): the EVM reader
 * batches its reads through it, the devnet installs it, the web app's chains name it.
 */
export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11";
