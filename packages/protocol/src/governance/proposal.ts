// What a governance proposal about the L2 protocol is, in one place for the CLI (`npm run gov`), the web
// app's Governance page and the tests: readable changes → the L2 executor's batch → the one L1 action
// that carries it (the timelock calling L1CrossDomainMessenger.sendMessage), and the hash by which the
// L2 messenger records the message once relayed. viem only (no ethers, no artifacts), so the browser
// bundle can import it as it is.
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  formatUnits,
  keccak256,
  parseAbi,
  parseAbiParameters,
  type Address,
  type Hex,
} from "viem";

/** One call the L2 executor makes. */
export interface L2Call {
  target: Address;
  value: bigint;
  data: Hex;
}

/** The L2 contracts governance administers (their admin role belongs to the executor). */
export interface GovernedContracts {
  StakedToken: Address;
  NodeLicense: Address;
  NodeRegistry: Address;
  VerificationRegistry: Address;
  RewardPools: Address;
}

/** A change a proposal asks of the L2 protocol, as people say it. */
export type ProtocolChange =
  | { kind: "set-quorum"; quorum: bigint }
  | { kind: "set-request-fee"; fee: bigint }
  | { kind: "set-job-timeout"; seconds: bigint }
  | { kind: "set-liveness-window"; seconds: bigint }
  | { kind: "accept-admin" }
  | { kind: "call"; call: L2Call };

export const EXECUTOR_ABI = parseAbi([
  "function execute((address target, uint256 value, bytes data)[] calls, uint256 deadline) payable",
  "event BatchExecuted(bytes32 indexed batchHash, uint256 callCount)",
]);

/** The L1 messenger: what a proposal calls, and the events its execution leaves. */
export const L1_MESSENGER_ABI = parseAbi([
  "function sendMessage(address target, bytes message, uint32 minGasLimit) payable",
  "event SentMessage(address indexed target, address sender, bytes message, uint256 messageNonce, uint256 gasLimit)",
  "event SentMessageExtension1(address indexed sender, uint256 value)",
]);

/** The L2 messenger's record of relayed messages (and the relay entry point, for replay checks). */
export const L2_MESSENGER_ABI = parseAbi([
  "function successfulMessages(bytes32 messageHash) view returns (bool)",
  "function failedMessages(bytes32 messageHash) view returns (bool)",
  "function relayMessage(uint256 nonce, address sender, address target, uint256 value, uint256 minGasLimit, bytes message) payable",
]);

const PROTOCOL_ABI = parseAbi([
  "function setQuorum(uint256 quorum)",
  "function setRequestFee(uint256 fee)",
  "function setJobTimeout(uint256 timeout)",
  "function setLivenessWindow(uint256 window)",
  "function acceptDefaultAdminTransfer()",
  "function beginDefaultAdminTransfer(address newAdmin)",
  "function grantRole(bytes32 role, address account)",
  "function revokeRole(bytes32 role, address account)",
  "function setPriceTiers((uint64 upToSupply, uint128 price)[] tiers)",
  "function setTreasury(address treasury)",
  "function airdrop(address to, uint256 quantity)",
  "function setRateSchedule((uint64 minPeriod, uint64 maxPeriod, uint64 minRate, uint64 maxRate) schedule)",
  "function setForfeitRecipient(address recipient)",
  "function cancelBatch(bytes32 batchHash)",
]);

/** What governance itself may call on L1 (its settings and its timelock), to say what such a proposal does. */
const L1_GOVERNANCE_ABI = parseAbi([
  "function setVotingDelay(uint48 newVotingDelay)",
  "function setVotingPeriod(uint32 newVotingPeriod)",
  "function setProposalThreshold(uint256 newProposalThreshold)",
  "function updateQuorumNumerator(uint256 newQuorumNumerator)",
  "function setProposalGuardian(address newProposalGuardian)",
  "function updateTimelock(address newTimelock)",
  "function updateDelay(uint256 newDelay)",
  "function grantRole(bytes32 role, address account)",
  "function revokeRole(bytes32 role, address account)",
]);

/** The L2 gas the messenger guarantees the executor's call: ample for a few parameter changes. */
export const DEFAULT_L2_GAS_LIMIT = 1_000_000;

/** The L2 calls that make `change`. */
export function l2CallsOf(change: ProtocolChange, l2: GovernedContracts): L2Call[] {
  const call = (target: Address, data: Hex): L2Call => ({ target, value: 0n, data });
  switch (change.kind) {
    case "set-quorum":
      return [call(l2.NodeRegistry, encodeFunctionData({ abi: PROTOCOL_ABI, functionName: "setQuorum", args: [change.quorum] }))];
    case "set-request-fee":
      return [call(l2.VerificationRegistry, encodeFunctionData({ abi: PROTOCOL_ABI, functionName: "setRequestFee", args: [change.fee] }))];
    case "set-job-timeout":
      return [
        call(l2.VerificationRegistry, encodeFunctionData({ abi: PROTOCOL_ABI, functionName: "setJobTimeout", args: [change.seconds] })),
      ];
    case "set-liveness-window":
      return [call(l2.NodeRegistry, encodeFunctionData({ abi: PROTOCOL_ABI, functionName: "setLivenessWindow", args: [change.seconds] }))];
    case "accept-admin": {
      const accept = encodeFunctionData({ abi: PROTOCOL_ABI, functionName: "acceptDefaultAdminTransfer" });
      return [l2.StakedToken, l2.NodeLicense, l2.NodeRegistry, l2.VerificationRegistry, l2.RewardPools].map((target) =>
        call(target, accept),
      );
    }
    case "call":
      return [change.call];
  }
}

/** A one-line description of `change` (amounts in base units: the caller formats them if it wants). */
export function describeChange(change: ProtocolChange): string {
  switch (change.kind) {
    case "set-quorum":
      return `set the quorum to ${change.quorum} licenses`;
    case "set-request-fee":
      return `set the request fee to ${formatUnits(change.fee, 18)} staked tokens (${change.fee} base units)`;
    case "set-job-timeout":
      return `set the job timeout to ${change.seconds} s`;
    case "set-liveness-window":
      return `set the liveness window to ${change.seconds} s`;
    case "accept-admin":
      return "accept the admin role of the L2 protocol contracts";
    case "call":
      return `call ${change.call.target} with ${change.call.data.slice(0, 10)}… and ${change.call.value} wei`;
  }
}

/** The Governor's proposal arguments. */
export interface L1Proposal {
  targets: Address[];
  values: bigint[];
  calldatas: Hex[];
  description: string;
}

/**
 * The proposal that makes `calls` on L2: its one action is `L1CrossDomainMessenger.sendMessage(executor,
 * execute(calls, deadline), l2GasLimit)`, made by the timelock (the only L1 sender the executor obeys);
 * ETH for the calls travels with the message, so the action's value is their sum. `deadline` (L2 seconds)
 * bounds when the batch may run: a relay that failed can be replayed by anyone, but never after it.
 */
export function l1ProposalFor(input: {
  l1Messenger: Address;
  executor: Address;
  calls: readonly L2Call[];
  deadline: bigint;
  description: string;
  l2GasLimit?: number;
}): L1Proposal {
  if (input.calls.length === 0) throw new Error("a governance proposal needs at least one L2 call");
  const message = encodeFunctionData({
    abi: EXECUTOR_ABI,
    functionName: "execute",
    args: [input.calls.map((call) => ({ ...call })), input.deadline],
  });
  const value = input.calls.reduce((sum, call) => sum + call.value, 0n);
  const sendMessage = encodeFunctionData({
    abi: L1_MESSENGER_ABI,
    functionName: "sendMessage",
    args: [input.executor, message, input.l2GasLimit ?? DEFAULT_L2_GAS_LIMIT],
  });
  return { targets: [input.l1Messenger], values: [value], calldatas: [sendMessage], description: input.description };
}

/** `keccak256(abi.encode(calls, deadline))`: the id the executor's `BatchExecuted` event carries. */
export function batchHash(calls: readonly L2Call[], deadline: bigint): Hex {
  return keccak256(
    encodeAbiParameters(parseAbiParameters("(address target, uint256 value, bytes data)[], uint256"), [
      calls.map((call) => ({ ...call })),
      deadline,
    ]),
  );
}

/** A message the L1 messenger sent (its `SentMessage` and `SentMessageExtension1` events). */
export interface SentMessage {
  nonce: bigint;
  sender: Address;
  target: Address;
  value: bigint;
  gasLimit: bigint;
  message: Hex;
}

/**
 * The hash under which the L2 messenger records a relayed message (`successfulMessages`, `failedMessages`):
 * OP's `Hashing.hashCrossDomainMessageV1`, the keccak-256 of the `relayMessage` call that carries it.
 */
export function crossDomainMessageHash(sent: SentMessage): Hex {
  return keccak256(
    encodeFunctionData({
      abi: L2_MESSENGER_ABI,
      functionName: "relayMessage",
      args: [sent.nonce, sent.sender, sent.target, sent.value, sent.gasLimit, sent.message],
    }),
  );
}

/** The L2 calls of a proposal made by `l1ProposalFor` (undefined for a proposal of another shape). */
export function l2CallsOfProposal(
  calldatas: readonly Hex[],
): { calls: L2Call[]; deadline: bigint; executor: Address; gasLimit: bigint } | undefined {
  if (calldatas.length !== 1) return undefined;
  try {
    const send = decodeFunctionData({ abi: L1_MESSENGER_ABI, data: calldatas[0] });
    if (send.functionName !== "sendMessage") return undefined;
    const [executor, message, gasLimit] = send.args;
    const batch = decodeFunctionData({ abi: EXECUTOR_ABI, data: message });
    if (batch.functionName !== "execute") return undefined;
    const [calls, deadline] = batch.args;
    return {
      calls: calls.map((call) => ({ target: call.target, value: call.value, data: call.data })),
      deadline,
      executor,
      gasLimit: BigInt(gasLimit),
    };
  } catch {
    return undefined;
  }
}

/** One L2 call in words, naming the contract and the change where they are known. */
export function describeL2Call(call: L2Call, l2: GovernedContracts & { GovernanceExecutor?: Address }): string {
  return describeCall(call.target, call.value, call.data, { ...l2 }, PROTOCOL_ABI);
}

function describeCall(
  target: Address,
  value: bigint,
  data: Hex,
  names: Record<string, string | undefined>,
  abi: typeof PROTOCOL_ABI | typeof L1_GOVERNANCE_ABI,
): string {
  const name =
    Object.entries(names).find(([, address]) => address !== undefined && address.toLowerCase() === target.toLowerCase())?.[0] ?? target;
  const paid = value === 0n ? "" : ` with ${value} wei`;
  try {
    const decoded = decodeFunctionData({ abi, data });
    const args = (decoded.args ?? []).map((arg) =>
      typeof arg === "object" ? JSON.stringify(arg, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) : String(arg),
    );
    return `${name}.${decoded.functionName}(${args.join(", ")})${paid}`;
  } catch {
    return `${name}: call ${data.slice(0, 10)}…${paid}`;
  }
}

/** What a proposal does, read from its actions, with whatever differs from the shape this project proposes. */
export interface ProposalInspection {
  /** Each action in words: the L2 calls of a batch to the executor, else the L1 action itself. */
  changes: string[];
  /** Reasons to look twice: an action other than an L2 batch, another executor, value or gas limit. */
  warnings: string[];
  /** The batch's deadline (L2 seconds), when the proposal is one L2 batch. */
  l2Deadline: bigint | undefined;
}

/**
 * Reads proposal actions back as this project makes them: one `L1CrossDomainMessenger.sendMessage` of an
 * `execute(calls, deadline)` batch to `expected.executor`, carrying the calls' ETH. Anything else is still
 * listed (decoded where it is a governance setting) and flagged, so a vote never hides what it does.
 */
export function inspectProposal(
  action: { targets: readonly Address[]; values: readonly bigint[]; calldatas: readonly Hex[] },
  expected: { l1Messenger: Address; executor: Address; governor: Address; timelock: Address; l2: GovernedContracts },
): ProposalInspection {
  const changes: string[] = [];
  const warnings: string[] = [];
  let l2Deadline: bigint | undefined;
  const l1Names = { Governor: expected.governor, Timelock: expected.timelock, L1CrossDomainMessenger: expected.l1Messenger };
  action.targets.forEach((target, index) => {
    const value = action.values[index] ?? 0n;
    const data = action.calldatas[index] ?? "0x";
    const batch = target.toLowerCase() === expected.l1Messenger.toLowerCase() ? l2CallsOfProposal([data]) : undefined;
    if (batch === undefined) {
      changes.push(`L1: ${describeCall(target, value, data, l1Names, L1_GOVERNANCE_ABI)}`);
      warnings.push(`action ${index + 1} is not an L2 batch through the L1 messenger: it acts on L1`);
      return;
    }
    if (batch.executor.toLowerCase() !== expected.executor.toLowerCase())
      warnings.push(`action ${index + 1} sends its batch to ${batch.executor}, not to the governance executor`);
    const carried = batch.calls.reduce((sum, call) => sum + call.value, 0n);
    if (carried !== value)
      warnings.push(`action ${index + 1} sends ${value} wei for calls that spend ${carried}: the batch would fail on L2`);
    if (batch.gasLimit !== BigInt(DEFAULT_L2_GAS_LIMIT))
      warnings.push(`action ${index + 1} gives its batch ${batch.gasLimit} L2 gas (the default is ${DEFAULT_L2_GAS_LIMIT})`);
    l2Deadline = l2Deadline === undefined || batch.deadline < l2Deadline ? batch.deadline : l2Deadline;
    for (const call of batch.calls) changes.push(`L2: ${describeL2Call(call, { ...expected.l2, GovernanceExecutor: expected.executor })}`);
  });
  return { changes, warnings, l2Deadline };
}
