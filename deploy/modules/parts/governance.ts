import type { IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";

import { L2_PREDEPLOYS } from "@avn/protocol/op-predeploys";
import { PROPOSAL_THRESHOLD, QUORUM_PERCENT, TIMELOCK_DELAY, VOTING_DELAY, VOTING_PERIOD } from "./defaults.ts";
import type { TokenFuture } from "./types.ts";

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/**
 * The L1 side of governance: a `ProtocolTimelock` and a `ProtocolGovernor` over `primary`'s votes. The
 * defaults (`./defaults.ts`) are the live values (a day's delay before a vote, a week's vote, 0.1% of the
 * supply to propose, 4% quorum, two days in the timelock); the devnet's parameter file shortens them. The timelock is the
 * governor's executor: the governor alone proposes and cancels there, anyone executes a ready operation,
 * and the deployer, admin only for this wiring, renounces the role at the end, so the timelock administers
 * itself.
 */
export function l1Governance(m: IgnitionModuleBuilder, primary: TokenFuture) {
  const deployer = m.getAccount(0);
  const timelock = m.contract("ProtocolTimelock", [m.getParameter("timelockDelay", TIMELOCK_DELAY), [], [ZERO_ADDRESS], deployer]);
  const governor = m.contract("ProtocolGovernor", [
    primary,
    timelock,
    m.getParameter("votingDelay", VOTING_DELAY),
    m.getParameter("votingPeriod", VOTING_PERIOD),
    m.getParameter("proposalThreshold", PROPOSAL_THRESHOLD),
    m.getParameter("quorumPercent", QUORUM_PERCENT),
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
