import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { decodeFunctionResult, encodeFunctionResult, parseAbi, toFunctionSelector, type Hex } from "viem";

/** What a node's EVM reader calls: Multicall3's `aggregate3`, every balance of a batch in one `eth_call`. */
const MULTICALL3_ABI = parseAbi([
  "function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns ((bool success, bytes returnData)[] returnData)",
]);
const AGGREGATE3_SELECTOR = toFunctionSelector(MULTICALL3_ABI[0]);

export interface SourceProxyOptions {
  /** The EVM source's JSON-RPC URL (HTTP). */
  upstreamUrl: string;
  /**
   * Holds the answer to a request with an `eth_call` until this resolves (the test's event: so many new blocks
   * of the chain the node votes on, say): a node behind a slow source votes late.
   */
  holdCalls?: () => Promise<void>;
  /**
   * Adds 1 to the return data of each successful call of an `aggregate3` whose return data is one 32-byte
   * word (a `balanceOf`): a node reading through it answers every balance job wrong, by one unit, with a
   * well-formed answer.
   */
  lie?: boolean;
}

export interface SourceProxy {
  url: string;
  stop(): Promise<void>;
}

interface JsonRpcRequest {
  id: unknown;
  method: string;
  params?: unknown[];
}

interface JsonRpcResponse {
  id: unknown;
  result?: unknown;
}

/**
 * An EVM source endpoint between one node and the real one, for tests of how the network treats a node
 * that is slow or wrong (docs/verification.md, "Quality of service"). HTTP JSON-RPC only, single requests
 * and batches; everything but the changes its options ask for passes through as it is.
 */
export async function startSourceProxy(options: SourceProxyOptions): Promise<SourceProxy> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      void answer(Buffer.concat(chunks).toString("utf8"), options).then(
        (body) => response.writeHead(200, { "content-type": "application/json" }).end(body),
        (error: unknown) => response.writeHead(502).end(error instanceof Error ? error.message : String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function answer(body: string, options: SourceProxyOptions): Promise<string> {
  const parsed = JSON.parse(body) as JsonRpcRequest | JsonRpcRequest[];
  const requests = Array.isArray(parsed) ? parsed : [parsed];
  const upstream = await fetch(options.upstreamUrl, { method: "POST", headers: { "content-type": "application/json" }, body });
  const text = await upstream.text();
  const calls = requests.filter((request) => request.method === "eth_call");
  if (calls.length === 0) return text;
  await options.holdCalls?.();
  if (options.lie !== true) return text;
  const answered = JSON.parse(text) as JsonRpcResponse | JsonRpcResponse[];
  const responses = Array.isArray(answered) ? answered : [answered];
  for (const response of responses) {
    const request = requests.find((candidate) => candidate.id === response.id);
    const data =
      (request?.params?.[0] as { data?: string; input?: string } | undefined)?.data ?? (request?.params?.[0] as { input?: string })?.input;
    if (request?.method !== "eth_call" || typeof response.result !== "string" || !data?.startsWith(AGGREGATE3_SELECTOR)) continue;
    const results = decodeFunctionResult({ abi: MULTICALL3_ABI, functionName: "aggregate3", data: response.result as Hex });
    response.result = encodeFunctionResult({
      abi: MULTICALL3_ABI,
      functionName: "aggregate3",
      result: results.map(({ success, returnData }) => ({ success, returnData: success ? oneMore(returnData) : returnData })),
    });
  }
  return JSON.stringify(answered);
}

/** A 32-byte word plus one; other return data as it is. */
function oneMore(returnData: Hex): Hex {
  return returnData.length === 2 + 64 ? `0x${(BigInt(returnData) + 1n).toString(16).padStart(64, "0")}` : returnData;
}
