import { watch } from "node:fs";
import { open, stat } from "node:fs/promises";
import path from "node:path";
import { StringDecoder } from "node:string_decoder";

import type { StackFile } from "../../src/common/stack-file.ts";
import { LOCAL_STACK_API_WORKERS } from "../../src/devnet/local-stack.ts";
import { startVerificationNetwork, type VerificationNetwork } from "../../src/devnet/verification-network.ts";
import type { TestDevnet } from "./devnet.ts";
import { stackOfTestDevnet } from "./stack.ts";

const projectRoot = path.resolve(import.meta.dirname, "..", "..");

/**
 * The verification network of `npm start` (demo holdings, three licensed nodes, the API as two processes) on a test devnet
 * that has the contracts deployed, with `nodeEnv` for the nodes (tests shorten their intervals), and the
 * stack file's view of it all.
 */
export async function startTestVerificationNetwork(
  test: TestDevnet,
  workDirName: string,
  nodeEnv: Record<string, string>,
  /** More environment for the API (over the deadline below). */
  apiEnv: Record<string, string> = {},
): Promise<{ network: VerificationNetwork; stack: StackFile }> {
  const { devnet, deployment } = test;
  if (deployment === undefined) throw new Error("the test devnet has no contracts deployed (start it with deploy: true)");
  const { adminHandovers: _none, ...l2Contracts } = deployment.l2;
  const network = await startVerificationNetwork({
    projectRoot,
    workDir: path.join(test.stateDir, workDirName),
    l1: devnet.l1,
    l2: devnet.l2,
    deployer: devnet.accounts.deployer,
    contracts: { l1PrimaryToken: deployment.l1PrimaryToken, l1StandardBridge: devnet.l1Contracts.L1StandardBridge, l2: l2Contracts },
    apiPort: 0,
    // As `npm start` runs it: several API processes, the hub's rounds crossing between them.
    apiWorkers: LOCAL_STACK_API_WORKERS,
    nodeEnv,
    // The hub waits up to 15 s for a quorum of signatures, not the 3 s it is configured with by default: under
    // npm test's load (four processes on two cores) the nodes' reads for a demo condition once took longer, and
    // the API answered 503. These tests check what is signed; `npm run bench:attest` measures how fast.
    apiEnv: { ATTESTATION_DEADLINE_MS: "15000", ...apiEnv },
    onProgress: () => undefined,
  });
  const base = stackOfTestDevnet(test);
  const stack: StackFile = {
    ...base,
    contracts: { l1: base.contracts!.l1, l2: { ...base.contracts!.l2, ...network.stack.contracts.l2 } },
    accounts: { ...base.accounts, ...network.stack.accounts },
    api: network.stack.api,
    demo: network.stack.demo,
    nodes: network.stack.nodes,
  };
  return { network, stack };
}

/** A circuit node's log line (pino JSON), parsed. */
export type NodeLogEntry = { msg?: string } & Record<string, unknown>;

/** Where a log file ends now: the lines a process writes from here on start at this byte. */
export async function logFileEnd(logFile: string): Promise<number> {
  return (await stat(logFile)).size;
}

/**
 * Follows `logFile` as it grows, from byte `fromByte`, until a JSON line that `accept` takes: read again on
 * each change the file system reports (fs.watch), never on a timer. Resolves with that line and the JSON
 * lines before it (from `fromByte` on); rejects after `timeoutMs` with the last lines read.
 */
export async function nodeLogLine(
  logFile: string,
  fromByte: number,
  accept: (entry: NodeLogEntry) => boolean,
  timeoutMs = 60_000,
): Promise<{ line: NodeLogEntry; before: NodeLogEntry[] }> {
  const decoder = new StringDecoder("utf8");
  const before: NodeLogEntry[] = [];
  const text: string[] = [];
  let offset = fromByte;
  let partial = "";
  return await new Promise((resolve, reject) => {
    let settled = false;
    let reading = false;
    let changed = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      watcher.close();
      deadline.removeEventListener("abort", giveUp);
      finish();
    };
    // Reads what was appended since the last read; a change reported meanwhile reads again after it.
    const readAppended = async () => {
      changed = true;
      if (reading) return;
      reading = true;
      try {
        while (changed && !settled) {
          changed = false;
          const file = await open(logFile, "r");
          try {
            const { size } = await file.stat();
            if (size <= offset) continue;
            const { buffer, bytesRead } = await file.read(Buffer.alloc(size - offset), 0, size - offset, offset);
            offset += bytesRead;
            partial += decoder.write(buffer.subarray(0, bytesRead));
          } finally {
            await file.close();
          }
          const lines = partial.split("\n");
          partial = lines.pop() ?? "";
          for (const line of lines) {
            text.push(line);
            let entry: unknown;
            try {
              entry = JSON.parse(line);
            } catch {
              continue; // not pino's (a warning of Node's own)
            }
            if (typeof entry !== "object" || entry === null) continue;
            const parsed = entry as NodeLogEntry;
            if (accept(parsed)) return settle(() => resolve({ line: parsed, before }));
            before.push(parsed);
          }
        }
      } catch (error) {
        settle(() => reject(error instanceof Error ? error : new Error(String(error))));
      } finally {
        reading = false;
      }
    };
    const watcher = watch(logFile, () => void readAppended());
    watcher.on("error", (error) => settle(() => reject(error)));
    // A deadline for the failure message (the last lines read), not a wait: the line ends the wait when it comes.
    const deadline = AbortSignal.timeout(timeoutMs);
    const giveUp = () =>
      settle(() => reject(new Error(`no such line in ${logFile} within ${timeoutMs} ms; the last ones:\n${text.slice(-30).join("\n")}`)));
    deadline.addEventListener("abort", giveUp, { once: true });
    void readAppended(); // what is there already
  });
}
