import { expect } from "chai";

import {
  IgnoreReason,
  ITEM_KINDS,
  JobStatus,
  MAX_PEER_OBSERVATIONS,
  MAX_VOTES_PER_JOB,
  PROPOSAL_STATES,
  REDEMPTION_STATUSES,
  SourceChain,
  SUPPORT,
} from "@avn/protocol/constants";
import { buildAstOf, nodesOf, type AstNode } from "../../helpers/solidity-ast.ts";

// The TypeScript mirror of the contracts' enums and constants is checked against the compiler's own view
// of the contracts (the ASTs in the build info), so a reordered enum or a changed constant fails here.

/** Every AST node of the build that compiled `contractName`. */
async function astNodesOf(contractName: string): Promise<AstNode[]> {
  return Object.values((await buildAstOf(contractName)).sources).flatMap(nodesOf);
}

/** An enum's member names in declaration order, which is their value. */
function enumMembers(nodes: AstNode[], canonicalName: string): string[] {
  const definition = nodes.find((node) => node.nodeType === "EnumDefinition" && node.canonicalName === canonicalName);
  if (definition === undefined) throw new Error(`enum ${canonicalName} not found`);
  return (definition.members ?? []).map((member) => member.name ?? "");
}

/** The literal value of a constant declared by name (in whichever contract or library holds it). */
function constantValue(nodes: AstNode[], name: string): bigint {
  const found = nodes.filter((node) => node.nodeType === "VariableDeclaration" && node.constant === true && node.name === name);
  if (found.length !== 1) throw new Error(`constant ${name} declared ${found.length} times`);
  const literal = found[0].value;
  if (typeof literal !== "object" || literal?.nodeType !== "Literal" || typeof literal.value !== "string") {
    throw new Error(`constant ${name} is not a plain literal`);
  }
  return BigInt(literal.value.replaceAll("_", ""));
}

/** `{ jobFinalized: 0 }` from `JobFinalized` at index 0. */
function asCamelCaseIndex(members: string[]): Record<string, number> {
  return Object.fromEntries(members.map((member, index) => [member[0].toLowerCase() + member.slice(1), index]));
}

describe("protocol constants in TypeScript", function () {
  it("name the registry's job statuses and ignore reasons as the registry orders them", async function () {
    const nodes = await astNodesOf("VerificationRegistry");
    const statuses = asCamelCaseIndex(enumMembers(nodes, "IVerificationRegistry.JobStatus"));
    expect(Object.fromEntries(Object.entries(JobStatus).map(([name, value]) => [name, Number(value)]))).to.deep.equal(statuses);
    expect(IgnoreReason).to.deep.equal(asCamelCaseIndex(enumMembers(nodes, "IVerificationRegistry.IgnoreReason")));
  });

  it("number the source chains and the vote limit as the registry and the attestation verifier do", async function () {
    const registry = await astNodesOf("VerificationRegistry");
    expect(SourceChain.ethereum).to.equal(Number(constantValue(registry, "_CHAIN_ETHEREUM")));
    expect(SourceChain.solana).to.equal(Number(constantValue(registry, "_CHAIN_SOLANA")));
    expect(MAX_VOTES_PER_JOB).to.equal(constantValue(registry, "MAX_VOTES_PER_JOB"));
    const verifier = await astNodesOf("AttestationVerifier");
    expect(Math.max(...Object.values(SourceChain))).to.equal(Number(constantValue(verifier, "_LAST_CHAIN")));
  });

  it("bound a QoS report's peers as QosReports does", async function () {
    expect(MAX_PEER_OBSERVATIONS).to.equal(Number(constantValue(await astNodesOf("QosReports"), "MAX_PEER_OBSERVATIONS")));
  });

  it("name the claim platform's item kinds in its order", async function () {
    expect([...ITEM_KINDS]).to.deep.equal(enumMembers(await astNodesOf("VoucherClaims"), "IVoucherClaims.ItemKind"));
  });

  it("name the staked token's redemption statuses in its order", async function () {
    expect([...REDEMPTION_STATUSES]).to.deep.equal(enumMembers(await astNodesOf("StakedToken"), "IStakedToken.RedemptionStatus"));
  });

  it("name the governor's proposal states and vote types in OpenZeppelin's order", async function () {
    const nodes = await astNodesOf("ProtocolGovernor");
    expect([...PROPOSAL_STATES]).to.deep.equal(enumMembers(nodes, "IGovernor.ProposalState"));
    expect(SUPPORT).to.deep.equal(asCamelCaseIndex(enumMembers(nodes, "GovernorCountingSimple.VoteType")));
  });
});
