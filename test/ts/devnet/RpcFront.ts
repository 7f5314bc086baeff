import { expect } from "chai";
import { createServer, type AddressInfo } from "node:net";

import { startAnvil, type AnvilInstance } from "../../../src/devnet/anvil.ts";
import { startRpcFront, type RpcFront } from "../../../src/devnet/rpc-front.ts";

const FROM = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"; // anvil's first development account
const MIN_MS = 300;

describe("devnet: the RPC front before anvil", function () {
  this.timeout(60_000);
  let anvil: AnvilInstance;
  let front: RpcFront;

  before(async function () {
    anvil = await startAnvil({ chainId: 900 });
    front = await startRpcFront({ upstreamPort: anvil.port, minSubmissionMs: MIN_MS });
  });
  after(async function () {
    await front?.stop();
    await anvil?.stop();
  });

  const call = async (body: unknown) => {
    const started = performance.now();
    const response = await fetch(front.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { ms: performance.now() - started, status: response.status, json: await response.json() };
  };
  const send = (id: number) => ({ jsonrpc: "2.0", id, method: "eth_sendTransaction", params: [{ from: FROM, to: FROM, value: "0x1" }] });
  const nonce = (id: number, tag: string) => ({ jsonrpc: "2.0", id, method: "eth_getTransactionCount", params: [FROM, tag] });

  it("answers a submission as anvil does, no sooner than its minimum, while the transaction is mined at once", async function () {
    const before = Number(((await call(nonce(1, "latest"))).json as { result: string }).result);
    const submitted = await call(send(2));
    expect(submitted.status).to.equal(200);
    expect((submitted.json as { result: string }).result).to.match(/^0x[0-9a-f]{64}$/);
    expect(submitted.ms).to.be.at.least(MIN_MS - 5);
    // Anvil mined it when it arrived: a read straight from anvil already counts it.
    const direct = await fetch(anvil.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(nonce(3, "latest")),
    });
    expect(Number(((await direct.json()) as { result: string }).result)).to.equal(before + 1);
  });

  it("answers reads at once, and holds a batch only when it holds a submission", async function () {
    const read = await call(nonce(4, "pending"));
    expect(read.ms).to.be.below(MIN_MS / 2);
    const batch = await call([nonce(5, "latest"), send(6)]);
    expect(batch.json).to.have.length(2);
    expect(batch.ms).to.be.at.least(MIN_MS - 5);
  });

  it("lets a web page of another origin call it: the preflight is allowed and answers carry the CORS header", async function () {
    const preflight = await fetch(front.rpcUrl, {
      method: "OPTIONS",
      headers: {
        origin: "http://127.0.0.1:8788",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(preflight.status).to.equal(204);
    expect(preflight.headers.get("access-control-allow-origin")).to.equal("*");
    expect(preflight.headers.get("access-control-allow-headers")).to.contain("content-type");
    const answer = await fetch(front.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "http://127.0.0.1:8788" },
      body: JSON.stringify(nonce(8, "latest")),
    });
    expect(answer.headers.get("access-control-allow-origin")).to.equal("*");
  });

  it("passes anvil's errors through unchanged", async function () {
    const { json } = await call({ jsonrpc: "2.0", id: 7, method: "eth_noSuchMethod", params: [] });
    expect((json as { error: { code: number } }).error.code).to.equal(-32601);
  });

  it("answers 502 with a JSON-RPC error when the chain behind it does not answer", async function () {
    // A chain that hangs up on every connection. (A port closed a moment ago could be taken meanwhile, by another
    // test process or by this front's own listen.)
    const hangsUp = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => hangsUp.listen(0, "127.0.0.1", resolve));
    const { port } = hangsUp.address() as AddressInfo;
    const orphan = await startRpcFront({ upstreamPort: port, minSubmissionMs: MIN_MS });
    try {
      const response = await fetch(orphan.rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(nonce(8, "latest")),
      });
      expect(response.status).to.equal(502);
      expect(response.headers.get("access-control-allow-origin")).to.equal("*");
      expect(((await response.json()) as { error: { message: string } }).error.message).to.equal("the devnet chain did not answer");
    } finally {
      await orphan.stop();
      await new Promise((resolve) => hangsUp.close(resolve));
    }
  });

  it("pipes a WebSocket to anvil: a subscription over the front delivers new blocks", async function () {
    const socket = new WebSocket(front.wsUrl);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    const messages: string[] = [];
    socket.onmessage = (event) => messages.push(String(event.data));
    const waitFor = async (seen: (message: string) => boolean) => {
      const deadline = Date.now() + 5_000;
      while (!messages.some(seen) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    // Mine only once anvil has answered the subscription: a block mined before it exists is not delivered.
    await waitFor((message) => (JSON.parse(message) as { id?: number }).id === 1);
    await call({ jsonrpc: "2.0", id: 8, method: "evm_mine", params: [] });
    await waitFor((message) => message.includes("eth_subscription"));
    socket.close();
    expect(messages.some((message) => message.includes("eth_subscription"))).to.equal(true);
  });
});
