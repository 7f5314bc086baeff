import { execFile } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

import { expect } from "chai";
import { Contract, type JsonRpcProvider } from "ethers";

import { writeStackFile, type StackFile } from "../../../src/common/stack-file.ts";
import { KIT_PACKAGES, packAndCheck, type PackedPackage } from "../../../src/tooling/kit-pack.ts";

const run = promisify(execFile);
const projectRoot = path.resolve(import.meta.dirname, "..", "..", "..");

/** What the kit's test needs of the end-to-end network it shares. */
export interface KitSuiteContext {
  stack: StackFile;
  l2: JsonRpcProvider;
}

/** The consumer example, packed, copied out of the repository, installed from the tarballs and compiled. */
export interface PreparedKitExample {
  workDir: string;
  example: string;
  packed: PackedPackage[];
  /** The environment the example runs in: the project's Node, nothing of the repository's own. */
  env: NodeJS.ProcessEnv;
}

/**
 * Starts preparing the consumer example as an integrator would (pack both packages, copy the example out of
 * the repository, `npm install` from the tarballs, `npm run build`): work for child processes that needs no
 * chain, so the end-to-end file starts it beside its devnet and the kit's tests await it. `remove()` deletes
 * the temporary folder once the preparation has ended, however it ended.
 */
export function startPreparingKitExample(): { ready: Promise<PreparedKitExample>; remove(): Promise<void> } {
  let workDir: string | undefined;
  const ready = (async () => {
    workDir = await mkdtemp(path.join(tmpdir(), "kit-example-"));
    const packed: PackedPackage[] = [];
    // The example's package.json installs ../../.kit/*.tgz: the same layout, in the temporary folder.
    for (const folder of KIT_PACKAGES) packed.push(await packAndCheck(path.join(projectRoot, folder), path.join(workDir, ".kit")));
    const example = path.join(workDir, "examples", "consumer");
    await cp(path.join(projectRoot, "examples", "consumer"), example, {
      recursive: true,
      // What a developer's own install or build left there (a lockfile pins the hashes of older tarballs).
      filter: (source) => !/[/\\](node_modules|artifacts|cache|package-lock\.json)([/\\]|$)/.test(path.relative(projectRoot, source)),
    });
    // The project's Node first on PATH, as `npm start` users have it, and nothing of the repository's own
    // (the test runner puts its node_modules/.bin there: the example must use its own Hardhat). The install
    // reads the npm cache the repository's install filled, and the registry for anything missing.
    const outside = (process.env.PATH ?? "")
      .split(path.delimiter)
      .filter((entry) => !path.resolve(entry).startsWith(projectRoot + path.sep));
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: [path.dirname(process.execPath), ...outside].join(path.delimiter) };
    // Nor the settings of the processes running this test: Hardhat reads its global options from HARDHAT_*
    // (the test runner's config path among them), npm its own from npm_* (the repository as the prefix).
    for (const name of Object.keys(env)) if (name === "NODE_OPTIONS" || /^(HARDHAT_|npm_)/i.test(name)) delete env[name];
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: example, env, maxBuffer: 64 * 1024 * 1024 });
    await run("npm", ["run", "build"], { cwd: example, env, maxBuffer: 64 * 1024 * 1024 });
    return { workDir, example, packed, env };
  })();
  // Awaited by the tests; a failure before they run is theirs to report, not an unhandled rejection.
  ready.catch(() => undefined);
  return {
    ready,
    remove: async () => {
      await ready.catch(() => undefined);
      if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
    },
  };
}

/**
 * The integrators' kit as an integrator meets it: both packages packed, the consumer example copied out of
 * the repository and installed from the tarballs (nothing of the workspace reachable), compiled
 * (`startPreparingKitExample`), and its script run against the shared network: deploy GatedDrop, fetch an
 * attestation through @avn/sdk, claim.
 */
export function describeIntegratorsKit(context: () => KitSuiteContext & { kitExample: Promise<PreparedKitExample> }): void {
  describe("the integrators' kit: the consumer example installed from the packed tarballs", function () {
    this.timeout(300_000);

    it("packs @avn/sdk and @avn/contracts with every file their exports and READMEs name", async function () {
      const { packed } = await context().kitExample;
      expect(packed.map((entry) => `${entry.name}@${entry.version}`)).to.deep.equal(["@avn/sdk@0.1.0", "@avn/contracts@0.1.0"]);
      const [sdk, contracts] = packed;
      expect(sdk.files).to.include.members(["dist/index.js", "dist/index.d.ts", "README.md", "CHANGELOG.md", "package.json"]);
      expect(contracts.files).to.include.members([
        "AttestationConsumer.sol",
        "interfaces/IAttestationVerifier.sol",
        "README.md",
        "CHANGELOG.md",
      ]);
      // No source maps of the workspace, no tests, no configuration: what is published is what is used.
      expect(sdk.files.filter((file) => !/^(dist\/|README\.md$|CHANGELOG\.md$|package\.json$)/.test(file))).to.deep.equal([]);
      console.log(`      ${packed.map((entry) => `${entry.name}: ${entry.size} bytes packed, ${entry.unpackedSize} unpacked`).join("; ")}`);
    });

    it("deploys the example's gated contract, claims with an attestation fetched through @avn/sdk, and is refused a second claim", async function () {
      const { stack, l2 } = context();
      const { workDir, example, env } = await context().kitExample;
      const stackFile = path.join(workDir, "stack.json");
      await writeStackFile(stackFile, stack);
      const { stdout } = await run(process.execPath, ["scripts/claim.ts"], {
        cwd: example,
        env: { ...env, AVN_STACK_FILE: stackFile },
        maxBuffer: 16 * 1024 * 1024,
      });
      console.log(stdout.replace(/^/gm, "      ").trimEnd());
      const outcome = JSON.parse(stdout.trim().split("\n").at(-1)!) as Record<string, unknown>;
      const holding = stack.demo!.evm[0];
      expect(outcome).to.include({
        holder: stack.accounts!.demoHolder.address,
        balance: holding.balance,
        claimed: true,
        claimStatus: "success",
        secondClaim: "GatedDrop_AlreadyClaimed",
      });
      // The claim is on the chain, not only in the script's words.
      const drop = new Contract(
        outcome.drop as string,
        ["function claimed(address) view returns (bool)", "function TOKEN() view returns (address)"],
        l2,
      );
      expect(await drop.claimed(stack.accounts!.demoHolder.address)).to.equal(true);
      expect((await drop.TOKEN()).toLowerCase()).to.equal(holding.contract_address.toLowerCase());
    });
  });
}
