import { expect } from "chai";

import ProtocolModule from "../../../deploy/modules/Protocol.ts";
import { buildAstOf, nodesOf, type AstNode } from "../../helpers/solidity-ast.ts";

// The Solidity tests cannot run the Ignition modules, so test/solidity/utils/Fixtures.sol deploys the
// protocol itself. This test holds it to module Protocol (with module Tokens, which it uses): the fixture
// must deploy the same contracts, make the same wiring calls, and pass the modules' default for each
// parameter the tests do not choose themselves. The fixture is read as the compiler saw it (its AST in the
// build info), the module as Ignition sees it (its futures).

/** The module parameters whose defaults the fixture must use (the others each test chooses: see Fixtures.sol). */
const SHARED_DEFAULTS = [
  "minUnlockPeriod",
  "maxUnlockPeriod",
  "minRedemptionRate",
  "maxRedemptionRate",
  "epochDuration",
  "jobTimeout",
  "settlementDelay",
  "disputePeriod",
];
/** The fixture's functions that deploy and wire, as module Protocol does. */
const FIXTURE_DEPLOY_FUNCTIONS = ["_deployTokens", "_deployProtocol"];

/** The fixture's source unit, and every node of its build by id (to follow references into the contracts). */
async function fixtureAst() {
  const { sources, ownSource } = await buildAstOf("test/solidity/utils/Fixtures.sol:ProtocolFixture");
  const byId = new Map<number, AstNode>();
  for (const ast of Object.values(sources)) {
    for (const node of nodesOf(ast)) if (node.id !== undefined) byId.set(node.id, node);
  }
  return { unit: sources[ownSource], byId };
}

const SUBDENOMINATIONS: Record<string, bigint> = {
  seconds: 1n,
  minutes: 60n,
  hours: 3_600n,
  days: 86_400n,
  weeks: 604_800n,
  wei: 1n,
  gwei: 10n ** 9n,
  ether: 10n ** 18n,
};

/** A Solidity number literal's exact value ("0.25e18", "1_000", "0x10", with "days" and the like). */
function literalValue(text: string, subdenomination: string | null | undefined): bigint {
  const plain = text.replaceAll("_", "");
  let value: bigint;
  if (/^0x/i.test(plain)) value = BigInt(plain);
  else {
    const [mantissa, exponentText = "0"] = plain.toLowerCase().split("e");
    const [whole, fraction = ""] = mantissa.split(".");
    const exponent = BigInt(exponentText) - BigInt(fraction.length);
    const digits = BigInt(`${whole}${fraction}` || "0");
    if (exponent < 0n && digits % 10n ** -exponent !== 0n) throw new Error(`${text} is not a whole number`);
    value = exponent >= 0n ? digits * 10n ** exponent : digits / 10n ** -exponent;
  }
  return value * (subdenomination ? SUBDENOMINATIONS[subdenomination] : 1n);
}

type Value = bigint | { [field: string]: Value };

/**
 * What a constructor argument of the fixture comes to: a number (a literal, a constant, a conversion of
 * one), or a struct (by field) built in place or returned by an argument-less internal function.
 */
function evaluate(node: AstNode, byId: Map<number, AstNode>): Value {
  switch (node.nodeType) {
    case "Literal":
      if (typeof node.value !== "string") throw new Error("a literal without its value in the AST");
      return literalValue(node.value, node.subdenomination);
    case "Identifier": {
      const declaration = byId.get(node.referencedDeclaration!);
      if (declaration?.nodeType !== "VariableDeclaration" || declaration.constant !== true)
        throw new Error(`${node.name} is not a constant`);
      return evaluate(declaration.value as AstNode, byId);
    }
    case "FunctionCall": {
      const args = node.arguments ?? [];
      if (node.kind === "typeConversion") return evaluate(args[0], byId);
      if (node.kind === "structConstructorCall") {
        if (node.names === undefined || node.names.length !== args.length) throw new Error("struct built without field names");
        return Object.fromEntries(node.names.map((name, index) => [name, evaluate(args[index], byId)]));
      }
      const callee = node.expression?.nodeType === "Identifier" ? byId.get(node.expression.referencedDeclaration!) : undefined;
      const returns = nodesOf(callee?.body).filter((statement) => statement.nodeType === "Return");
      if (callee?.nodeType !== "FunctionDefinition" || args.length !== 0 || returns.length !== 1)
        throw new Error("cannot evaluate this call");
      return evaluate(returns[0].expression!, byId);
    }
    default:
      throw new Error(`cannot evaluate a ${node.nodeType}`);
  }
}

/** "StakedToken" from a node typed "contract StakedToken". */
function contractTypeOf(node: AstNode): string | undefined {
  return /^contract (\w+)$/.exec(node.typeDescriptions?.typeString ?? "")?.[1];
}

/**
 * A wiring call's argument as the module names it: a contract by its name, a role by the view that reads
 * it, the test contract (every admin, as the deploying account is in the module) as "admin".
 */
function describeFixtureArgument(node: AstNode): string {
  if (node.nodeType === "FunctionCall" && node.kind === "typeConversion") return describeFixtureArgument(node.arguments![0]);
  if (node.nodeType === "Identifier" && node.name === "this") return "admin";
  if (node.nodeType === "FunctionCall" && node.expression?.nodeType === "MemberAccess" && (node.arguments ?? []).length === 0) {
    return `${contractTypeOf(node.expression.expression!)}.${node.expression.memberName}()`;
  }
  const contract = contractTypeOf(node);
  if (contract === undefined) throw new Error(`cannot describe a ${node.nodeType} passed to a wiring call`);
  return contract;
}

/** The contracts the fixture deploys (their constructor calls) and the state-changing calls it makes on them. */
function fixtureDeployment(unit: AstNode, byId: Map<number, AstNode>) {
  const functions = nodesOf(unit).filter((node) => node.nodeType === "FunctionDefinition" && FIXTURE_DEPLOY_FUNCTIONS.includes(node.name!));
  expect(functions.map((definition) => definition.name).sort()).to.deep.equal([...FIXTURE_DEPLOY_FUNCTIONS].sort());
  const calls = functions.flatMap((definition) => nodesOf(definition.body)).filter((node) => node.nodeType === "FunctionCall");
  const deployments = new Map<string, AstNode[]>();
  const wiring: string[] = [];
  for (const call of calls) {
    const callee = call.expression!;
    if (callee.nodeType === "NewExpression") {
      const contract = contractTypeOf(callee.typeName!);
      if (contract !== undefined) deployments.set(contract, call.arguments ?? []); // not a memory array
    } else if (callee.nodeType === "MemberAccess" && contractTypeOf(callee.expression!) !== undefined) {
      // Reads (views, and the getters of public variables such as the role ids) change nothing.
      const target = byId.get(callee.referencedDeclaration!);
      if (target?.nodeType === "VariableDeclaration" || target?.stateMutability === "view" || target?.stateMutability === "pure") continue;
      wiring.push(
        `${contractTypeOf(callee.expression!)}.${callee.memberName}(${(call.arguments ?? []).map(describeFixtureArgument).join(", ")})`,
      );
    }
  }
  return { deployments, wiring: wiring.sort() };
}

interface Future {
  type: string;
  id: string;
  contractName?: string;
  functionName?: string;
  contract?: Future;
  constructorArgs?: unknown[];
  args?: unknown[];
}

/** A module call's argument, named as `describeFixtureArgument` names the fixture's. */
function describeModuleArgument(argument: unknown): string {
  const value = argument as Future & { name?: string; defaultValue?: unknown };
  if (value.type === "ACCOUNT") return "admin";
  if (value.type === "MODULE_PARAMETER") {
    if (value.name === "admin") return "admin";
    throw new Error(`module parameter ${value.name} in a wiring call`);
  }
  if (value.type === "STATIC_CALL") return `${value.contract!.contractName}.${value.functionName}()`;
  if (value.contractName !== undefined) return value.contractName;
  throw new Error(`cannot describe ${JSON.stringify(argument)}`);
}

/** Module Protocol's futures, with those of the modules it uses. */
function moduleFutures(): Future[] {
  const futures: Future[] = [];
  const visit = (module: typeof ProtocolModule | { futures: Set<unknown>; submodules: Set<unknown> }) => {
    futures.push(...([...module.futures] as Future[]));
    for (const submodule of module.submodules) visit(submodule as typeof ProtocolModule);
  };
  visit(ProtocolModule);
  return futures;
}

/** The defaults the fixture must match, by constructor and argument position (a struct: by field). */
function sharedDefaultsOf(futures: Future[]) {
  const expected: Array<{ contract: string; position: number; parameter: string; field?: string; value: bigint }> = [];
  for (const future of futures.filter((candidate) => candidate.type === "NAMED_ARTIFACT_CONTRACT_DEPLOYMENT")) {
    future.constructorArgs!.forEach((argument, position) => {
      const parameters: Array<[string | undefined, unknown]> =
        argument !== null && typeof argument === "object" && !("type" in argument) ? Object.entries(argument) : [[undefined, argument]];
      for (const [field, value] of parameters) {
        const parameter = value as { type?: string; name?: string; defaultValue?: unknown };
        if (parameter.type === "MODULE_PARAMETER" && SHARED_DEFAULTS.includes(parameter.name!)) {
          expected.push({
            contract: future.contractName!,
            position,
            parameter: parameter.name!,
            field,
            value: BigInt(parameter.defaultValue as bigint),
          });
        }
      }
    });
  }
  return expected;
}

describe("the Solidity fixtures against the Ignition modules", function () {
  it("deploy the contracts module Protocol deploys", async function () {
    const { unit, byId } = await fixtureAst();
    const modules = moduleFutures()
      .filter((future) => future.type === "NAMED_ARTIFACT_CONTRACT_DEPLOYMENT")
      .map((future) => future.contractName);
    expect([...fixtureDeployment(unit, byId).deployments.keys()].sort()).to.deep.equal(modules.sort());
  });

  it("make the wiring calls module Protocol makes, and no others", async function () {
    const { unit, byId } = await fixtureAst();
    const module = moduleFutures()
      .filter((future) => future.type === "CONTRACT_CALL")
      .map((future) => `${future.contract!.contractName}.${future.functionName}(${future.args!.map(describeModuleArgument).join(", ")})`)
      .sort();
    expect(module).to.have.length.greaterThan(0);
    expect(fixtureDeployment(unit, byId).wiring).to.deep.equal(module);
  });

  it("pass the modules' defaults where the tests choose nothing: the rate schedule, the epoch, the job timeout", async function () {
    const { unit, byId } = await fixtureAst();
    const { deployments } = fixtureDeployment(unit, byId);
    const expected = sharedDefaultsOf(moduleFutures());
    // Each shared parameter is found in the module, so that none is silently left unchecked.
    expect([...new Set(expected.map((entry) => entry.parameter))].sort()).to.deep.equal([...SHARED_DEFAULTS].sort());
    for (const { contract, position, parameter, field, value } of expected) {
      const argument = deployments.get(contract)?.[position];
      if (argument === undefined) throw new Error(`the fixture passes no argument ${position} to ${contract}`);
      const evaluated = evaluate(argument, byId);
      const actual = field === undefined ? evaluated : (evaluated as Record<string, Value>)[field];
      expect(actual, `${contract} argument ${position}${field ? `.${field}` : ""} (module parameter ${parameter})`).to.equal(value);
    }
  });
});
