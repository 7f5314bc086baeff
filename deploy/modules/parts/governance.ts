import type { IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";

import { L2_PREDEPLOYS } from "../../../src/op/predeploys.js";
import type { TokenFuture } from "./types.js";

const DAY = 24n * 60n * 60n;
const E18 = 10n ** 18n;
// The live L1 makes a block every 12 s; the Governor counts its delay and period in blocks (the primary
// token's clock is the block number).
const L1_BLOCKS_PER_DAY = DAY / 12n;
const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/**
 * The L1 side of governance: a `ProtocolTimelock` and a `ProtocolGovernor` over `primary`'s votes. The
 * defaults are the live values (a day's delay before a vote, a week's vote, 0.1% of the supply to propose,
 * 4% quorum, two days in the timelock); the devnet's parameter file shortens them. The timelock is the
 * governor's executor: the governor alone proposes and cancels there, anyone executes a ready operation,
 * and the deployer, admin only for this wiring, renounces the role at the end, so the timelock administers
 * itself.
 */
export function l1Governance(m: IgnitionModuleBuilder, primary: TokenFuture) {
  const deployer = m.getAccount(0);
  const timelock = m.contract("ProtocolTimelock", [m.getParameter("timelockDelay", 2n * DAY), [], [ZERO_ADDRESS], deployer]);
  const governor = m.contract("ProtocolGovernor", [
    primary,
    timelock,
    m.getParameter("votingDelay", L1_BLOCKS_PER_DAY),
    m.getParameter("votingPeriod", 7n * L1_BLOCKS_PER_DAY),
    m.getParameter("proposalThreshold", 1_000_000n * E18),
    m.getParameter("quorumPercent", 4n),
    m.getParameter<string>("proposalGuardian"),
  ]);
  const proposer = m.call(timelock, "grantRole", [m.staticCall(timelock, "PROPOSER_ROLE"), governor], {
    id: "Timelock_grantProposerRole",
  });
  const canceller = m.call(timelock, "grantRole", [m.staticCall(timelock, "CANCELLER_ROLE"), governor], {
    id: "Timelock_grantCancellerRole",
  });
  m.call(timelock, "renounceRole", [m.staticCall(timelock, "DEFAULT_ADMIN_ROLE"), deployer], {
    id: "Timelock_renounceDeployerAdmin",
    after: [proposer, canceller],
  });
  return { governor, timelock };
}

/**
 * The L2 side of governance: the executor that runs what the L1 timelock sends through the OP Stack's
 * cross-domain messengers (`l1Timelock`, no default: the deploy scripts pass the L1 deployment's).
 */
export function l2Governance(m: IgnitionModuleBuilder) {
  const executor = m.contract("GovernanceExecutor", [L2_PREDEPLOYS.L2CrossDomainMessenger, m.getParameter<string>("l1Timelock")]);
  return { executor };
}
