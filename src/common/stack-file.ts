import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/** An account of the local chains, with its key: anvil's public development accounts, worthless elsewhere. */
export interface DevAccount {
  address: string;
  privateKey: string;
}

/** The devnet L1 makes a block every 2 s (and one per transaction). */
export const DEVNET_L1_BLOCK_SECONDS = 2;

/**
 * The local stack file, `.devnet/stack.json`: how tests, scripts and outside tools
 * find the running stack. Parts not running yet are absent; the file exists only while the stack runs.
 */
export interface StackFile {
  l1?: { chainId: number; rpcUrl: string };
  l2?: { chainId: number; rpcUrl: string; wsUrl: string };
  solana?: { rpcUrl: string };
  /** The API: its URL, the demo key, and how many processes serve it (the hub on, rounds shared between them). */
  api?: { baseUrl: string; apiKey: string; workers?: number };
  /** The demo webhook receiver `npm start` runs: subscribe its URL, and it prints each delivery. */
  webhooks?: { receiverUrl: string };
  /** The web app served for this stack, and its block explorer (a page of the app). */
  web?: { url: string; explorerUrl: string };
  /** The credits service: its URL, its Stripe webhook's, and that webhook's signing secret (generated, local). */
  credits?: { url: string; webhookUrl: string; webhookSecret: string };
  contracts?: { l1?: Record<string, string>; l2?: Record<string, string> };
  accounts?: Record<string, DevAccount>;
  /**
   * The circuit nodes: burner, owner, licenses, and `pid`, the node's own process (not a wrapper: a
   * `kill -STOP` on it pauses that node), rewritten when the stack restarts the node.
   */
  nodes?: Array<{ burner: string; owner: string; licenseIds: number[]; pid: number }>;
  /**
   * The network's challenger (`npm run challenger`): its account, which holds CHALLENGER_ROLE, its own
   * process (`kill -STOP` pauses the challenges) and its log.
   */
  challenger?: { address: string; pid: number; logFile: string };
  /**
   * The intent layer's solver (`npm run solver`): its account (filling on L1, repaid on the L2), its own process,
   * its log, and its fee policy (the least fee it fills for, in basis points of an order's input).
   */
  solver?: { address: string; pid: number; logFile: string; minFeeBps: number };
  /**
   * The demo holdings with their expected balances (an `erc1155` entry has its `token_id`), and demo
   * conditions: a `POST /api/conditions` body, the verdict it gets, and what it asks.
   */
  demo?: {
    evm: Array<Record<string, string>>;
    svm: Array<Record<string, string>>;
    conditions?: Array<{ request: Record<string, unknown>; verdict: boolean; note: string }>;
  };
}

/** The block explorer's URL in the web app served at `webUrl` (its route is pinned: node logs link below it). */
export function explorerUrlOf(webUrl: string): string {
  return `${webUrl.replace(/\/+$/, "")}/explorer`;
}

/** Where the stack file of the project at `projectRoot` lives. */
export function stackFilePath(projectRoot: string): string {
  return path.join(projectRoot, ".devnet", "stack.json");
}

/** Writes the stack file atomically (a reader never sees half a file), readable by its owner only. */
export async function writeStackFile(file: string, stack: StackFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(stack, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, file);
}

export async function readStackFile(file: string): Promise<StackFile> {
  return JSON.parse(await readFile(file, "utf8")) as StackFile;
}

/** A stack that `npm start` runs in full: its L2, API and demo holdings are there. */
export type DemoStack = StackFile & Required<Pick<StackFile, "l2" | "api" | "demo">>;

/**
 * The full stack running for the project at `projectRoot`, for the demo scripts; throws, saying what to
 * do, when none runs or the one running is only the devnet.
 */
export async function readDemoStack(projectRoot: string): Promise<DemoStack> {
  let stack: StackFile;
  try {
    stack = await readStackFile(stackFilePath(projectRoot));
  } catch {
    throw new Error("No running stack found (.devnet/stack.json): start it first with `npm start`.");
  }
  if (stack.l2 === undefined || stack.api === undefined || stack.demo === undefined)
    throw new Error("The running stack has no API or nodes (started with `npm run devnet`?): use `npm start`.");
  return stack as DemoStack;
}

/** Removes the stack file: a stopped stack must not be found by tools. */
export async function removeStackFile(file: string): Promise<void> {
  await rm(file, { force: true });
}
