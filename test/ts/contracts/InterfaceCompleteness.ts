import { createRequire } from "node:module";

import { expect } from "chai";
import { Interface, type InterfaceAbi } from "ethers";
import hre from "hardhat";

const require = createRequire(import.meta.url);

/**
 * Every public or external function, event and custom error of a protocol contract is declared in its
 * interface (packages/contracts/interfaces/I*.sol, the @avn/contracts package; IGovernanceExecutor in
 * contracts/interfaces/), which is what other contracts, the node, the API and the web app
 * compile against and what reviewers read: a function added to a contract but not to its interface is
 * reachable on-chain yet invisible to every typed caller. The check reads the compiled ABIs, so the
 * interface's ABI includes what it inherits (IERC20, IERC721Enumerable, IVotes...).
 *
 * The only exceptions are what a contract inherits from standard OpenZeppelin code, excused base by base
 * from the ABI OpenZeppelin ships for that base (the same 5.x package the contracts compile with): their
 * interfaces are OpenZeppelin's, and repeating them in ours would copy them (and, for the role admin's
 * functions, change nothing a caller of our interface needs). Errors raised inside OpenZeppelin libraries
 * (SafeCast, SafeERC20) are excused the same way.
 */
/** An excused base: OpenZeppelin's by default, or (`eas`) one the EAS package ships, at its path under contracts/. */
type Exception = { base: string; why: string; eas?: string };

const ACCESS_CONTROL: Exception = {
  base: "AccessControlDefaultAdminRules",
  why: "roles and the two-step admin transfer: OpenZeppelin's IAccessControlDefaultAdminRules",
};
const REENTRANCY: Exception = { base: "ReentrancyGuardTransient", why: "its ReentrancyGuardReentrantCall error only" };
const SAFE_CAST: Exception = { base: "SafeCast", why: "library: its downcast overflow error" };
const SAFE_ERC20: Exception = { base: "SafeERC20", why: "library: its failed-operation error" };
const EIP712: Exception = { base: "EIP712", why: "ERC-5267 eip712Domain() and its event, ShortStrings' errors" };

const PAIRS: { contract: string; iface: string; inherited: Exception[] }[] = [
  { contract: "VerificationRegistry", iface: "IVerificationRegistry", inherited: [ACCESS_CONTROL, REENTRANCY, SAFE_CAST, SAFE_ERC20] },
  { contract: "NodeRegistry", iface: "INodeRegistry", inherited: [ACCESS_CONTROL, SAFE_CAST] },
  {
    contract: "NodeLicense",
    iface: "INodeLicense",
    inherited: [
      ACCESS_CONTROL,
      // name(), symbol(), tokenURI() (ERC-721 metadata) and the ERC-721 errors.
      { base: "ERC721Enumerable", why: "ERC-721 metadata and errors beyond IERC721Enumerable" },
      SAFE_CAST,
      SAFE_ERC20,
    ],
  },
  {
    contract: "StakedToken",
    iface: "IStakedToken",
    inherited: [ACCESS_CONTROL, { base: "ERC20", why: "the ERC-20 errors (ERC-6093)" }, SAFE_CAST, SAFE_ERC20],
  },
  {
    contract: "PrimaryToken",
    iface: "IPrimaryToken",
    inherited: [
      { base: "ERC20", why: "the ERC-20 errors (ERC-6093)" },
      { base: "ERC20Permit", why: "eip712Domain() (ERC-5267) and the permit errors" },
      { base: "ERC20Votes", why: "checkpoints(), numCheckpoints(), the ERC-6372 clock and the votes errors" },
    ],
  },
  {
    contract: "VoucherClaims",
    iface: "IVoucherClaims",
    inherited: [
      ACCESS_CONTROL,
      { base: "Pausable", why: "paused() and its events and errors" },
      REENTRANCY,
      EIP712,
      { base: "IERC721Receiver", why: "onERC721Received: the standard receiver hook, declared by OpenZeppelin" },
      SAFE_CAST,
      SAFE_ERC20,
    ],
  },
  { contract: "GovernanceExecutor", iface: "IGovernanceExecutor", inherited: [] },
  { contract: "AttestationVerifier", iface: "IAttestationVerifier", inherited: [EIP712] },
  { contract: "OriginSettler", iface: "IProvenOriginSettler", inherited: [SAFE_ERC20] },
  { contract: "L1OriginSettler", iface: "IMessagedOriginSettler", inherited: [SAFE_ERC20] },
  { contract: "DestinationSettler", iface: "IIntentDestinationSettler", inherited: [SAFE_ERC20] },
  { contract: "L2DestinationSettler", iface: "IReportingDestinationSettler", inherited: [SAFE_ERC20] },
  {
    contract: "AttestationExporter",
    iface: "IAttestationExporter",
    inherited: [
      {
        base: "SchemaResolver",
        eas: "resolver/SchemaResolver.sol",
        why: "EAS's resolver callbacks (attest, revoke and their batches), isPayable(), version() and their errors: EAS's ISchemaResolver",
      },
    ],
  },
];

type Fragments = { functions: Set<string>; events: Set<string>; errors: Set<string> };

/** The selectors (functions, errors) and topics (events) of an ABI, each keyed to its signature. */
function fragmentsOf(abi: InterfaceAbi): Fragments & { names: Map<string, string> } {
  const iface = new Interface(abi);
  const result = { functions: new Set<string>(), events: new Set<string>(), errors: new Set<string>(), names: new Map<string, string>() };
  iface.forEachFunction((f) => (result.functions.add(f.selector), result.names.set(f.selector, f.format())));
  iface.forEachEvent((e) => (result.events.add(e.topicHash), result.names.set(e.topicHash, e.format())));
  iface.forEachError((e) => (result.errors.add(e.selector), result.names.set(e.selector, e.format())));
  return result;
}

function baseAbi({ base, eas }: Exception): InterfaceAbi {
  if (eas !== undefined) return require(`@ethereum-attestation-service/eas-contracts/artifacts/contracts/${eas}/${base}.json`).abi;
  return require(`@openzeppelin/contracts/build/contracts/${base}.json`).abi;
}

/** What `contractAbi` has that neither `interfaceAbi` nor an excused base declares, as signatures. */
function undeclared(contractAbi: InterfaceAbi, interfaceAbi: InterfaceAbi, excusedAbis: InterfaceAbi[] = []) {
  const contract = fragmentsOf(contractAbi);
  const declared = [interfaceAbi, ...excusedAbis].map(fragmentsOf);
  const missing = (kind: keyof Fragments) =>
    [...contract[kind]]
      .filter((key) => !declared.some((d) => d[kind].has(key)))
      .map((key) => contract.names.get(key)!)
      .sort();
  return { functions: missing("functions"), events: missing("events"), errors: missing("errors") };
}

describe("Interface completeness", function () {
  for (const { contract, iface, inherited } of PAIRS) {
    describe(`${contract} / ${iface}`, function () {
      let missing: ReturnType<typeof undeclared>;
      let excusedBare: ReturnType<typeof undeclared>;

      before(async function () {
        const contractAbi = (await hre.artifacts.readArtifact(contract)).abi as InterfaceAbi;
        const interfaceAbi = (await hre.artifacts.readArtifact(iface)).abi as InterfaceAbi;
        missing = undeclared(contractAbi, interfaceAbi, inherited.map(baseAbi));
        excusedBare = undeclared(contractAbi, interfaceAbi);
      });

      it("declares every public and external function in the interface", function () {
        expect(missing.functions, `${contract}'s functions missing from ${iface}`).to.deep.equal([]);
      });

      it("declares every event in the interface", function () {
        expect(missing.events, `${contract}'s events missing from ${iface}`).to.deep.equal([]);
      });

      it("declares every custom error in the interface", function () {
        expect(missing.errors, `${contract}'s errors missing from ${iface}`).to.deep.equal([]);
      });

      it("excuses only bases it actually inherits something from", function () {
        // A stale exception would silently excuse a function of our own with the same signature later.
        for (const exception of inherited) {
          const { base } = exception;
          const own = fragmentsOf(baseAbi(exception));
          const used = [...excusedBare.functions, ...excusedBare.events, ...excusedBare.errors].some((signature) =>
            [...own.names.values()].includes(signature),
          );
          expect(used, `${contract} excuses ${base} but inherits nothing undeclared from it`).to.equal(true);
        }
      });
    });
  }

  it("reports a function, an event and an error a contract adds without declaring them", function () {
    // The check itself: a contract ABI with one of each more than its interface must be reported.
    const declared = ["function a() view returns (uint256)", "event A(uint256)", "error E()"];
    const added = ["function b(address)", "event B(address indexed)", "error F(uint256)"];
    const excused = ["function c()"];
    expect(undeclared([...declared, ...added, ...excused], declared, [excused])).to.deep.equal({
      functions: ["b(address)"],
      events: ["B(address)"],
      errors: ["F(uint256)"],
    });
  });
});
