import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { expect } from "chai";
import { Interface } from "ethers";

import { integer, parseChanges } from "../../../src/governance/cli-arguments.ts";
import { runCli } from "../../../src/governance/cli.ts";
import { GovernanceError } from "../../../src/governance/governance.ts";
import { sentMessageIn } from "../../../src/governance/status.ts";

const TARGET = "0x00000000000000000000000000000000000000aa";

describe("npm run gov: reading what the user typed", function () {
  let dir: string;
  before(async function () {
    dir = await mkdtemp(path.join(tmpdir(), "gov-cli-"));
  });
  after(async function () {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads whole numbers written plainly or in scientific notation, exactly", function () {
    expect(integer("3", "x")).to.equal(3n);
    expect(integer("2e18", "x")).to.equal(2n * 10n ** 18n);
    expect(integer("2.5e18", "x")).to.equal(25n * 10n ** 17n);
    expect(integer("1.000e3", "x")).to.equal(1000n);
    for (const bad of ["1.5", "-1", "0x10", "1e-3", "", "2 tokens"]) {
      expect(() => integer(bad, "set-request-fee"), bad).to.throw(GovernanceError, /set-request-fee takes a whole number/);
    }
  });

  it("reads several changes into one proposal, in order", async function () {
    expect(
      await parseChanges([
        "set-quorum",
        "3",
        "set-request-fee",
        "2e18",
        "accept-admin",
        "set-job-timeout",
        "600",
        "set-liveness-window",
        "300",
      ]),
    ).to.deep.equal([
      { kind: "set-quorum", quorum: 3n },
      { kind: "set-request-fee", fee: 2n * 10n ** 18n },
      { kind: "accept-admin" },
      { kind: "set-job-timeout", seconds: 600n },
      { kind: "set-liveness-window", seconds: 300n },
    ]);
  });

  it("refuses an unknown change, a missing value, and an empty proposal", async function () {
    await expectRejected(parseChanges(["set-quorom", "3"]), /Unknown change "set-quorom" \(known: set-quorum, /);
    await expectRejected(parseChanges(["set-quorum"]), /set-quorum needs a value/);
    await expectRejected(parseChanges([]), /Name at least one change/);
  });

  it("reads raw calls from a JSON file, by calldata or by signature and arguments", async function () {
    const file = path.join(dir, "calls.json");
    await writeFile(
      file,
      JSON.stringify([
        { target: TARGET, data: "0x1234" },
        { target: TARGET, value: "1e3", signature: "setQuorum(uint256)", args: [3] },
      ]),
    );
    const [first, second] = await parseChanges(["calls", file]);
    expect(first).to.deep.equal({
      kind: "call",
      call: { target: "0x00000000000000000000000000000000000000AA", value: 0n, data: "0x1234" },
    });
    expect(second).to.deep.equal({
      kind: "call",
      call: {
        target: "0x00000000000000000000000000000000000000AA",
        value: 1000n,
        data: new Interface(["function setQuorum(uint256)"]).encodeFunctionData("setQuorum", [3]),
      },
    });
  });

  it("says which raw call is wrong and why", async function () {
    const write = async (content: string) => {
      const file = path.join(dir, `bad-${Math.random()}.json`);
      await writeFile(file, content);
      return file;
    };
    await expectRejected(parseChanges(["calls", path.join(dir, "missing.json")]), /calls: cannot read/);
    await expectRejected(parseChanges(["calls", await write("[]")]), /must hold a non-empty array/);
    await expectRejected(
      parseChanges(["calls", await write(`[{"target": "nope", "data": "0x"}]`)]),
      /calls\[0\] of .*: target must be an address/,
    );
    await expectRejected(
      parseChanges(["calls", await write(`[{"target": "${TARGET}", "data": "12"}]`)]),
      /calls\[0\].*: data must be 0x-prefixed hex/,
    );
    await expectRejected(
      parseChanges(["calls", await write(`[{"target": "${TARGET}"}]`)]),
      /calls\[0\].*: give data, or a signature with its args/,
    );
    await expectRejected(
      parseChanges(["calls", await write(`[{"target": "${TARGET}", "signature": "setQuorum(uint256)", "args": []}]`)]),
      /calls\[0\]/,
    );
  });

  it("answers a wrong command or network with its usage and exit code 1, and needs a running stack on the devnet", async function () {
    const lines: string[] = [];
    const context = {
      projectRoot: dir,
      env: {},
      print: (line: string) => lines.push(line),
      printError: (line: string) => lines.push(line),
    };
    expect(await runCli(["status", "--network", "mainnet"], context)).to.equal(1);
    expect(lines.pop()).to.match(/--network must be devnet or testnet/);
    expect(await runCli(["status"], context)).to.equal(1);
    expect(lines.pop()).to.match(/No local stack is running \(\.devnet\/stack\.json not found\): start one with `npm start`/);
    expect(await runCli(["status", "--network", "testnet"], context)).to.equal(1);
    expect(lines.pop()).to.match(/not found: deploy first|Set L1_TESTNET_RPC_URL/);
    expect(await runCli(["--help"], context)).to.equal(0);
    expect(lines.pop()).to.match(/^Usage: npm run gov -- <command>/);
  });
});

async function expectRejected(promise: Promise<unknown>, message: RegExp): Promise<void> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(GovernanceError);
    expect((error as Error).message).to.match(message);
    return;
  }
  expect.fail("expected a GovernanceError");
}

describe("governance status: the message a proposal's execution sent to the L2 executor", function () {
  const messenger = "0x00000000000000000000000000000000000000c1";
  const executor = "0x00000000000000000000000000000000000000e1";
  const timelock = "0x00000000000000000000000000000000000000d1";
  const abi = new Interface([
    "event SentMessage(address indexed target, address sender, bytes message, uint256 messageNonce, uint256 gasLimit)",
    "event SentMessageExtension1(address indexed sender, uint256 value)",
  ]);
  const log = (name: string, args: unknown[]) => ({ address: messenger, ...abi.encodeEventLog(name, args) });
  const sent = (target: string, nonce: bigint) => log("SentMessage", [target, timelock, "0x1234", nonce, 1_000_000n]);
  const extension = (value: bigint) => log("SentMessageExtension1", [timelock, value]);

  it("takes the value from the extension that follows the executor's message, not a later message's", function () {
    const alone = sentMessageIn({ logs: [sent(executor, 7n), extension(5n)] } as never, { l1Messenger: messenger, executor });
    expect(alone).to.include({ nonce: 7n, value: 5n, gasLimit: 1_000_000n });
    // A second message, to another target, with its own value: the executor's keeps 5.
    const another = sentMessageIn({ logs: [sent(executor, 7n), extension(5n), sent(TARGET, 8n), extension(9n)] } as never, {
      l1Messenger: messenger,
      executor,
    });
    expect(another).to.include({ nonce: 7n, value: 5n });
    // Another target's message first: its value is not the executor's.
    const after = sentMessageIn({ logs: [sent(TARGET, 6n), extension(9n), sent(executor, 7n), extension(0n)] } as never, {
      l1Messenger: messenger,
      executor,
    });
    expect(after).to.include({ nonce: 7n, value: 0n });
    expect(sentMessageIn({ logs: [sent(TARGET, 6n), extension(9n)] } as never, { l1Messenger: messenger, executor })).to.equal(undefined);
  });
});
