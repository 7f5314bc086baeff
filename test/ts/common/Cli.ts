import { execFile } from "node:child_process";
import path from "node:path";

import { AvnError } from "@avn/protocol/errors";
import { expect } from "chai";

import { runCli, type Cli, type CliContext, type CliOption, type CliValues } from "../../../src/common/cli.ts";

const OPTIONS = {
  mode: { type: "string", choices: ["fast", "slow"], default: "fast", global: true, description: "how to go about it" },
  name: { type: "string", value: "<who>", description: "the one to greet" },
  loud: { type: "boolean", description: "in capitals" },
  times: { type: "string", value: "<n>", default: "1", description: "how often" },
} as const satisfies Record<string, CliOption>;

class FixtureError extends AvnError<"NOT_NOW"> {}

/** What the commands received, in order. */
let received: { command: string; values: CliValues<typeof OPTIONS>; args: string[] }[] = [];

/** A command line of the test's own, declared as the repository's CLIs declare theirs. */
const FIXTURE: Cli<typeof OPTIONS, CliContext> = {
  invocation: "fixture --",
  about: "A command line of the test's own.",
  usageCode: "BAD_USAGE",
  options: OPTIONS,
  footer: "Keys: FIXTURE_KEY.",
  commands: {
    greet: {
      summary: "say hello",
      options: ["name", "loud", "times"],
      required: ["name"],
      details: "Prints one line per --times.",
      run: async (input, context) => {
        received.push(input);
        for (let index = 0; index < Number(input.values.times); index += 1)
          context.print(input.values.loud === true ? `HELLO ${input.values.name!.toUpperCase()}` : `hello ${input.values.name}`);
      },
    },
    echo: {
      summary: "print the words",
      arguments: "<word>...",
      run: async (input, context) => {
        received.push(input);
        context.print(input.args.join(" "));
      },
    },
    refuse: {
      summary: "refuse with a coded error",
      run: async () => {
        throw new FixtureError("NOT_NOW", "Not now: try again in 5 s", { cause: new Error("https://rpc.example/v3/SECRET-KEY") });
      },
    },
    crash: {
      summary: "fail in a way nobody expected",
      run: async () => {
        throw new Error("connect ECONNREFUSED 10.0.0.7:8545 for https://rpc.example/v3/SECRET-KEY\nsecond line");
      },
    },
  },
};

const HELP = [
  "Usage: fixture -- <command> [options]",
  "",
  "A command line of the test's own.",
  "",
  "Commands:",
  "  greet --name <who> [--loud] [--times <n>]",
  "                                  say hello",
  "  echo <word>...                  print the words",
  "  refuse                          refuse with a coded error",
  "  crash                           fail in a way nobody expected",
  "",
  "Options of every command:",
  "  --mode fast|slow  how to go about it (default: fast)",
  "  -h, --help        this help; `help <command>` for one command's",
  "",
  "`fixture -- help <command>` shows a command's options.",
  "",
  "Keys: FIXTURE_KEY.",
].join("\n");

const GREET_HELP = [
  "Usage: fixture -- greet --name <who> [--loud] [--times <n>] [options]",
  "",
  "say hello",
  "",
  "Prints one line per --times.",
  "",
  "Options:",
  "  --name <who>  the one to greet",
  "  --loud        in capitals",
  "  --times <n>   how often (default: 1)",
  "",
  "Options of every command:",
  "  --mode fast|slow  how to go about it (default: fast)",
  "  -h, --help        this help; `help <command>` for one command's",
  "",
  "Keys: FIXTURE_KEY.",
].join("\n");

/** Runs the fixture as a process would: its exit code, and what it printed to stdout and stderr. */
async function run(args: string[], env: NodeJS.ProcessEnv = {}, cli: Cli<typeof OPTIONS, CliContext> = FIXTURE) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(cli, args, { print: (text) => out.push(text), printError: (text) => err.push(text), env });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("the CLI skeleton (src/common/cli.ts): parsing, help, coded errors and exit codes", function () {
  beforeEach(function () {
    received = [];
  });

  it("writes the help from the declarations: every command's synopsis and summary, the options with their defaults", async function () {
    for (const args of [[], ["--help"], ["-h"], ["help"]]) {
      expect(await run(args), args.join(" ")).to.deep.equal({ code: 0, out: HELP, err: "" });
    }
    for (const args of [
      ["help", "greet"],
      ["greet", "--help"],
      ["greet", "-h", "--name", "Ada"],
    ]) {
      expect(await run(args), args.join(" ")).to.deep.equal({ code: 0, out: GREET_HELP, err: "" });
    }
    expect(received).to.deep.equal([]);
  });

  it("refuses an unknown option or command with the message and the usage on stderr, exit code 1, and runs nothing", async function () {
    expect(await run(["greet", "--name", "Ada", "--bogus"])).to.deep.equal({
      code: 1,
      out: "",
      err: `error [BAD_USAGE]: Unknown option --bogus\n\n${HELP}`,
    });
    expect(await run(["-x"])).to.deep.equal({ code: 1, out: "", err: `error [BAD_USAGE]: Unknown option -x\n\n${HELP}` });
    expect(await run(["teleport"])).to.deep.equal({ code: 1, out: "", err: `error [BAD_USAGE]: Unknown command "teleport"\n\n${HELP}` });
    expect(await run(["help", "teleport"])).to.deep.equal({
      code: 1,
      out: "",
      err: `error [BAD_USAGE]: Unknown command "teleport"\n\n${HELP}`,
    });
    expect(received).to.deep.equal([]);
  });

  it("refuses what the command does not declare, a missing or stray value, with the command's own help", async function () {
    const refused = async (args: string[], message: string) => {
      const { code, out, err } = await run(args);
      expect({ code, out, err }, args.join(" ")).to.deep.equal({ code: 1, out: "", err: `error [BAD_USAGE]: ${message}\n\n${GREET_HELP}` });
    };
    await refused(["greet", "--name"], "--name needs a value: the one to greet");
    await refused(["greet", "--name", "--loud"], "--name needs a value, not the option --loud (write --name=--loud if it is the value)");
    await refused(["greet", "--name", "Ada", "--loud=yes"], "--loud takes no value");
    await refused(["greet", "Ada", "--name", "Ada"], 'greet takes no arguments, not "Ada"');
    const echo = await run(["echo", "hi", "--name", "Ada"]);
    expect(echo.code).to.equal(1);
    expect(echo.err).to.match(/^error \[BAD_USAGE\]: echo takes no --name option\n\nUsage: fixture -- echo <word>\.\.\. \[options\]\n/);
    expect(received).to.deep.equal([]);
  });

  it("refuses a value outside the choices, and a missing required option, in one line", async function () {
    expect(await run(["greet", "--name", "Ada", "--mode", "warp"])).to.deep.equal({
      code: 1,
      out: "",
      err: 'error [BAD_USAGE]: --mode must be fast or slow, not "warp"',
    });
    expect(await run(["greet", "--loud"])).to.deep.equal({
      code: 1,
      out: "",
      err: "error [BAD_USAGE]: --name takes the one to greet: greet needs it",
    });
    expect(received).to.deep.equal([]);
  });

  it("runs the command with its options typed and defaulted, its arguments, and a value that starts with a dash", async function () {
    expect(await run(["greet", "--name", "Ada", "--times", "2", "--loud"])).to.deep.equal({
      code: 0,
      out: "HELLO ADA\nHELLO ADA",
      err: "",
    });
    expect(await run(["greet", "--name", "-1"])).to.deep.equal({ code: 0, out: "hello -1", err: "" });
    expect(await run(["echo", "a", "b", "--mode", "slow", "--", "--c"])).to.deep.equal({ code: 0, out: "a b --c", err: "" });
    expect(received).to.deep.equal([
      { command: "greet", values: { mode: "fast", name: "Ada", loud: true, times: "2" }, args: [] },
      { command: "greet", values: { mode: "fast", name: "-1", loud: undefined, times: "1" }, args: [] },
      { command: "echo", values: { mode: "slow", name: undefined, loud: undefined, times: "1" }, args: ["a", "b", "--c"] },
    ]);
  });

  it("prints a coded error as `error [CODE]: message` with exit code 1, without its stack or its cause, even with DEBUG", async function () {
    for (const env of [{}, { DEBUG: "1" }]) {
      expect(await run(["refuse"], env)).to.deep.equal({ code: 1, out: "", err: "error [NOT_NOW]: Not now: try again in 5 s" });
    }
    // A CLI whose refusals never showed their code keeps printing them so.
    expect(await run(["refuse"], {}, { ...FIXTURE, printCodes: false })).to.deep.equal({
      code: 1,
      out: "",
      err: "error: Not now: try again in 5 s",
    });
  });

  it("prints an unexpected error as its first line without URLs or hosts, exit code 2, and its stack's frames only with DEBUG", async function () {
    const expected = "error: connect ECONNREFUSED <host> for <url>";
    for (const env of [{}, { DEBUG: "" }, { DEBUG: "0" }]) {
      expect(await run(["crash"], env), JSON.stringify(env)).to.deep.equal({ code: 2, out: "", err: expected });
    }
    const debug = await run(["crash"], { DEBUG: "1" });
    expect(debug.code).to.equal(2);
    const [first, ...frames] = debug.err.split("\n");
    expect(first).to.equal(expected);
    expect(frames).to.have.length.above(0);
    expect(
      frames.every((line) => /^\s+at /.test(line)),
      debug.err,
    ).to.equal(true);
    expect(debug.err).to.match(/test\/ts\/common\/Cli\.ts:\d+/);
    expect(debug.err).to.not.include("SECRET-KEY");
    // Not an Error at all: still one line and exit code 2.
    const thrown: Cli<typeof OPTIONS, CliContext> = {
      ...FIXTURE,
      commands: {
        ...FIXTURE.commands,
        crash: {
          summary: "throw a string",
          run: async () => {
            // eslint-disable-next-line @typescript-eslint/only-throw-error -- what a careless library does
            throw "no answer from 10.0.0.7:8545";
          },
        },
      },
    };
    expect(await run(["crash"], { DEBUG: "1" }, thrown)).to.deep.equal({ code: 2, out: "", err: "error: no answer from <host>" });
  });

  it("is what `npm run bridge`, `npm run gov` and `npm run credits:stripe` run: their exit codes and stderr", async function () {
    this.timeout(60_000);
    const root = path.resolve(import.meta.dirname, "..", "..", "..");
    const script = (file: string, ...args: string[]) =>
      new Promise<{ code: number; out: string; err: string }>((resolve) => {
        execFile(
          process.execPath,
          ["--disable-warning=ExperimentalWarning", path.join("scripts", file), ...args],
          { cwd: root, env: { ...process.env, DEBUG: "" } },
          (error, out, err) => resolve({ code: error === null ? 0 : Number(error.code), out, err }),
        );
      });
    const [bridge, gov, stripe, stripeHelp] = await Promise.all([
      script("bridge.ts", "teleport"),
      script("gov.ts", "status", "--bogus"),
      script("credits-stripe.ts", "refund", "--credits", "10"),
      script("credits-stripe.ts", "help", "refund"),
    ]);
    expect([bridge.code, bridge.out]).to.deep.equal([1, ""]);
    expect(bridge.err).to.match(
      /^error \[INVALID_ARGUMENT\]: Unknown command "teleport"\n\nUsage: npm run bridge -- <command> \[options\]\n/,
    );
    expect([gov.code, gov.out]).to.deep.equal([1, ""]);
    expect(gov.err).to.match(/^error \[INVALID_INPUT\]: Unknown option --bogus\n\nUsage: npm run gov -- <command> \[options\]\n/);
    expect(stripe).to.deep.equal({
      code: 1,
      out: "",
      err: "error: --payment takes the payment intent id a purchase printed (pi_…): refund needs it\n",
    });
    expect([stripeHelp.code, stripeHelp.err]).to.deep.equal([0, ""]);
    expect(stripeHelp.out).to.match(/^Usage: npm run credits:stripe -- refund --payment <pi_…> --credits <n> \[options\]\n/);
  });
});
