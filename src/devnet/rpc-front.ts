import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { pipeline } from "node:stream/promises";
import { buffer } from "node:stream/consumers";

import { keccak256, Transaction } from "ethers";

/**
 * The JSON-RPC methods that submit a transaction (`eth_sendRawTransactionSync` contains the first name
 * and is matched by it).
 */
const SUBMISSION_METHODS = ["eth_sendRawTransaction", "eth_sendTransaction"];

/** A transaction's calldata is hex, so a body naming a submission method is a submission. */
function isSubmission(body: Buffer): boolean {
  const text = body.toString("latin1");
  return SUBMISSION_METHODS.some((method) => text.includes(`"${method}`));
}

/**
 * Cross-origin headers, as anvil itself sends them (`--allow-origin *`): a web page served from another
 * origin (the web app) reads the chain directly, as dApps do with public RPC endpoints.
 */
const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "POST, GET, OPTIONS",
  "access-control-allow-headers": "content-type",
  "access-control-max-age": "600",
};

/** Bodies above this are refused (anvil's own limit is lower; a contract deployment is well below). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface RpcFrontOptions {
  /** The anvil port behind the front (HTTP and WebSocket on one port). */
  upstreamPort: number;
  /**
   * The least time, in milliseconds, between a submission's arrival and its answer. Wallet libraries
   * read the sender's nonce before each transaction and some cache that read (ethers v6: 250 ms), so a
   * chain that answers a submission and mines it within that time makes the next transaction reuse a
   * spent nonce. A live RPC endpoint is never that fast; this one is made not to be either.
   */
  minSubmissionMs: number;
  /** For diagnosis: called once per submission with what the front took in and what anvil answered. */
  onSubmission?: (record: SubmissionRecord) => void;
}

/** One submission as the front saw it (`RpcFrontOptions.onSubmission`). */
export interface SubmissionRecord {
  /** When it arrived and when anvil answered, in milliseconds since the epoch. */
  arrivedAt: number;
  answeredAt: number;
  /** Each transaction in it, in the order sent: its hash, and its sender, nonce and gas when known. */
  transactions: SubmittedTransaction[];
  /** The HTTP status and body of anvil's answer, as passed on to the client. */
  status: number;
  answer: string;
}

export interface SubmittedTransaction {
  hash: string;
  from?: string;
  nonce?: number;
  gasLimit?: bigint;
  /** Who signed it: the sender (`eth_sendRawTransaction`) or anvil (`eth_sendTransaction`, an unlocked or impersonated account). */
  signedBy: "sender" | "anvil";
}

export interface RpcFront {
  /** HTTP JSON-RPC URL of the front. */
  rpcUrl: string;
  /** WebSocket URL of the front (passed through to anvil as it is). */
  wsUrl: string;
  /**
   * Makes the chain unreachable through the front until the returned function is called: every open
   * connection (HTTP keep-alive, WebSocket) is cut and each new one closed at once, as a dead RPC
   * provider's would be (`npm run chaos`). anvil itself runs on.
   */
  interrupt(): () => void;
  stop(): Promise<void>;
}

/**
 * The endpoint clients of a devnet chain use: every HTTP JSON-RPC request is forwarded to anvil and
 * answered as anvil answers it, except that a transaction submission (also inside a batch) is answered
 * no sooner than `minSubmissionMs` after it arrived. The transaction itself reaches anvil at once, so
 * mining and every state read are unchanged; only the sender learns of its submission later, as it would
 * from a remote node. Browsers may call it from any origin, as anvil allows. WebSocket upgrades are piped to anvil byte for byte (subscriptions); submissions
 * over a WebSocket are not slowed.
 */
export async function startRpcFront(options: RpcFrontOptions): Promise<RpcFront> {
  // Kept-alive connections to anvil, and answers streamed through: the front runs in the stack's process
  // beside everything else, under every client's load, so it holds no answer it need not read.
  const upstream: Upstream = { port: options.upstreamPort, agent: new Agent({ keepAlive: true }) };
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    forward(request, response, upstream, options).catch(() => {
      if (response.headersSent) return void response.destroy(); // cut mid-answer: the client sees a broken answer, not a wrong one
      response.writeHead(502, { ...CORS_HEADERS, "content-type": "application/json" });
      response.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "the devnet chain did not answer" } }));
    });
  });
  let reachable = true;
  server.on("connection", (socket) => {
    if (!reachable) return void socket.destroy();
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("upgrade", (request, clientSocket, head) => pipeUpgrade(request, clientSocket as Socket, head, options.upstreamPort, sockets));
  await listen(server);
  const { port } = server.address() as AddressInfo;
  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    interrupt: () => {
      reachable = false;
      for (const socket of sockets) socket.destroy();
      return () => {
        reachable = true;
      };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        upstream.agent.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Upstream {
  port: number;
  agent: Agent;
}

async function forward(request: IncomingMessage, response: ServerResponse, upstream: Upstream, options: RpcFrontOptions): Promise<void> {
  const arrivedAt = Date.now();
  if (request.method === "OPTIONS") {
    // A browser's preflight before its cross-origin POST.
    response.writeHead(204, CORS_HEADERS).end();
    return;
  }
  const body = await readBody(request);
  if (body === undefined) {
    response.writeHead(413).end();
    return;
  }
  const answer = await ask(upstream, request, body);
  const headers = { ...CORS_HEADERS, "content-type": answer.headers["content-type"] ?? "application/json" };
  if (!isSubmission(body)) {
    response.writeHead(answer.statusCode ?? 502, headers);
    await pipeline(answer, response);
    return;
  }
  const answerBody = await buffer(answer);
  options.onSubmission?.({
    arrivedAt,
    answeredAt: Date.now(),
    transactions: submittedTransactions(body, answerBody),
    status: answer.statusCode ?? 502,
    answer: answerBody.toString(),
  });
  const wait = arrivedAt + options.minSubmissionMs - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  response.writeHead(answer.statusCode ?? 502, headers);
  response.end(answerBody);
}

/** Sends the client's request on to anvil; resolves with anvil's answer once its headers have come. */
function ask(upstream: Upstream, request: IncomingMessage, body: Buffer): Promise<IncomingMessage> {
  const withBody = request.method !== "GET" && request.method !== "HEAD";
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: "127.0.0.1",
        port: upstream.port,
        agent: upstream.agent,
        method: request.method,
        path: request.url ?? "/",
        headers: {
          "content-type": request.headers["content-type"] ?? "application/json",
          ...(withBody ? { "content-length": body.length } : {}),
        },
      },
      resolve,
    );
    outgoing.once("error", reject);
    outgoing.end(withBody ? body : undefined);
  });
}

interface JsonRpcCall {
  id?: unknown;
  method: string;
  params?: unknown[];
}

/**
 * The transactions a request body submits (a request or a batch), with what anvil's answer says of each: a
 * raw transaction's hash, sender, nonce and gas from its own bytes; an `eth_sendTransaction`'s (anvil signs
 * it) from its parameters and the hash anvil answered. None if the body does not parse.
 */
function submittedTransactions(body: Buffer, answer: Buffer): SubmittedTransaction[] {
  const calls = parseJson(body)
    .flat()
    .filter((call): call is JsonRpcCall => typeof call === "object" && call !== null && typeof (call as JsonRpcCall).method === "string");
  const results = new Map<unknown, unknown>();
  for (const reply of parseJson(answer).flat()) {
    if (typeof reply === "object" && reply !== null && "id" in reply) results.set(reply.id, (reply as { result?: unknown }).result);
  }
  return calls.flatMap((call): SubmittedTransaction[] => {
    const first = call.params?.[0];
    if (call.method.startsWith("eth_sendRawTransaction") && typeof first === "string") return [describeRawTransaction(first)];
    if (call.method === "eth_sendTransaction" && typeof first === "object" && first !== null) {
      const request = first as { from?: string; nonce?: string; gas?: string };
      const result = results.get(call.id);
      return [
        {
          hash: typeof result === "string" ? result : "(refused)",
          from: request.from,
          nonce: quantity(request.nonce) === undefined ? undefined : Number(quantity(request.nonce)),
          gasLimit: quantity(request.gas),
          signedBy: "anvil",
        },
      ];
    }
    return [];
  });
}

/** A JSON-RPC quantity as a bigint; undefined when absent or not one (a client's junk must not fail the answer). */
function quantity(value: unknown): bigint | undefined {
  return typeof value === "string" && /^0x[0-9a-f]+$/i.test(value) ? BigInt(value) : undefined;
}

function parseJson(text: Buffer): unknown[] {
  try {
    return [JSON.parse(text.toString()) as unknown];
  } catch {
    return [];
  }
}

function describeRawTransaction(raw: string): SubmittedTransaction {
  const hash = keccak256(raw);
  try {
    const transaction = Transaction.from(raw);
    return { hash, from: transaction.from ?? undefined, nonce: transaction.nonce, gasLimit: transaction.gasLimit, signedBy: "sender" };
  } catch {
    return { hash, signedBy: "sender" }; // a deposit (type 0x7e), which ethers does not decode, or junk that anvil refuses
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Replays the upgrade request to anvil and then pipes both directions unchanged. */
function pipeUpgrade(request: IncomingMessage, clientSocket: Socket, head: Buffer, upstreamPort: number, sockets: Set<Socket>): void {
  const upstream = connect(upstreamPort, "127.0.0.1");
  sockets.add(upstream);
  upstream.once("close", () => sockets.delete(upstream));
  const closeBoth = () => {
    clientSocket.destroy();
    upstream.destroy();
  };
  upstream.once("error", closeBoth);
  clientSocket.once("error", closeBoth);
  upstream.once("connect", () => {
    const headerLines = [];
    for (let i = 0; i < request.rawHeaders.length; i += 2) headerLines.push(`${request.rawHeaders[i]}: ${request.rawHeaders[i + 1]}`);
    upstream.write(`${request.method} ${request.url} HTTP/1.1\r\n${headerLines.join("\r\n")}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(clientSocket).once("close", closeBoth);
    clientSocket.pipe(upstream).once("close", closeBoth);
  });
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}
