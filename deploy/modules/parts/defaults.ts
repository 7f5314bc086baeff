import { DAY, E18 } from "@avn/protocol/units";

// The one home of the modules' default parameters. The modules fall back on these when a parameter file
// leaves a value out; the test helpers, the gas benchmarks and the parity check of the Solidity fixture
// (test/ts/repository/FixturesParity.ts) import them from here, so a default changed here changes everywhere at once.

/** A rate of 100%: redemption rates are 1e18-scaled fractions. */
export const RATE_ONE = E18;

// The live L1 makes a block every 12 s; the Governor counts its delay and period in blocks (the primary
// token's clock is the block number).
const L1_BLOCKS_PER_DAY = DAY / 12n;

/** Token names and symbols. */
export const PRIMARY_NAME = "Verification Network";
export const PRIMARY_SYMBOL = "VNT";
export const STAKED_NAME = "Staked Verification Network";
export const STAKED_SYMBOL = "sVNT";
export const LICENSE_NAME = "Verification Node License";
export const LICENSE_SYMBOL = "VNODE";

/** The delay of every contract's two-step default-admin transfer. */
export const ADMIN_TRANSFER_DELAY = 3n * DAY;

/** The redemption schedule of the staked token: 15 days → 25%, 180 days → 95%, linear between. */
export const DEFAULT_RATE_SCHEDULE = {
  minPeriod: 15n * DAY,
  maxPeriod: 180n * DAY,
  minRate: (25n * RATE_ONE) / 100n,
  maxRate: (95n * RATE_ONE) / 100n,
} as const;

/** Node licenses: at most 50,000, sold in three price tiers of primary tokens. */
export const LICENSE_MAX_SUPPLY = 50_000n;
export const LICENSE_PRICE_TIERS: ReadonlyArray<{ readonly upToSupply: bigint; readonly price: bigint }> = [
  { upToSupply: 1_000n, price: 1_000n * E18 },
  { upToSupply: 10_000n, price: 2_000n * E18 },
  { upToSupply: 50_000n, price: 5_000n * E18 },
];

/** How long after its last heartbeat a node counts as live. */
export const LIVENESS_WINDOW = 10n * 60n;
/** Agreeing licenses that finalize a job. */
export const QUORUM = 2n;
/** The epochs quality of service is measured in and rewards are paid for. */
export const EPOCH_DURATION = 7n * DAY;
/**
 * After an epoch ends, how long before its rewards root can be voted: a day, longer than any job timeout a
 * node is likely to see, so that the epoch's jobs have finalized (or expired) when its figures are read.
 */
export const SETTLEMENT_DELAY = DAY;
/** How long governance can reject an accepted rewards root before its claims open. */
export const DISPUTE_PERIOD = 3n * DAY;
/** What a consumer pays per request, in staked tokens. */
export const REQUEST_FEE = 10n * E18;
/** How long a job stays open for votes. */
export const JOB_TIMEOUT = 60n * 60n;

/**
 * L1 governance: a day's delay before a vote, a week's vote (both in L1 blocks), 0.1% of the supply to
 * propose, 4% quorum, two days in the timelock. The devnet's parameter file shortens them.
 */
export const VOTING_DELAY = L1_BLOCKS_PER_DAY;
export const VOTING_PERIOD = 7n * L1_BLOCKS_PER_DAY;
export const PROPOSAL_THRESHOLD = 1_000_000n * E18;
export const QUORUM_PERCENT = 4n;
export const TIMELOCK_DELAY = 2n * DAY;

/**
 * The intent layer's settlement window: after an order's fill deadline, only settlement can close it for this
 * long, and then the user may take the escrow back. It must exceed the L2's largest lead over L1 time (the OP
 * stack's sequencer drift, 30 minutes) plus the time a filler needs to prove its fill, so that a fill made in
 * time can always be settled before a refund (docs/intents.md, "Trust model").
 */
export const INTENT_SETTLEMENT_WINDOW = 2n * 3600n;
/** How old an L1 block a settlement proof may be at: a fill record never changes, so any block after it will do. */
export const INTENT_MAX_PROOF_AGE = DAY;

/**
 * The settlement window of fast deposits (L1 → L2, `L1OriginSettler`): a fill's report reaches L1 only once the
 * L2 output covering it is proven and the challenge period (seven days live) is over, so the window is that period
 * plus a day for the output's proposal, the proof and the relay.
 */
export const INTENT_L1_SETTLEMENT_WINDOW = 8n * DAY;
