import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { expect } from "chai";

import { ATTEST_NOT_SUPPORTED, BATCH_SUCCESS_MESSAGE, RATE_LIMITED_ENTRY } from "../../../src/api/batch.ts";
import { CONDITION_SUCCESS_MESSAGE } from "../../../src/api/server/conditions-schemas.ts";
import { SUCCESS_MESSAGE } from "../../../src/api/server/responses.ts";
import {
  AvnApiError,
  AvnClient,
  AvnError,
  InvalidArgumentError,
  UnsupportedRuntimeError,
  type AvnClientOptions,
} from "../../../packages/sdk/src/index.ts";
import { parseRetryAfter } from "../../../packages/sdk/src/http.ts";
import { parseJsonExact, reviveExactIntegers } from "../../../packages/sdk/src/json.ts";

/** The demo's ERC-20 balance above 2^53 (src/devnet/demo-holdings.ts): a double would read it as …336. */
const ABOVE_2_53 = 9007199254753337n;
const OWNER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const TOKEN = "0x5fbdb2315678afecb367f032bb115d0bd9f0e0a8";
const QUERY_RESULT = `0x${ABOVE_2_53.toString(16).padStart(64, "0")}`;
const SOLANA_OWNER = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const SOLANA_MINT = "EPjFWdd5AufqSSqeM2qrkMwS2LvtKzZ4oHvXUJvHkwkP";
const API_KEY = "avn_test-key";

/** One request as the server saw it. */
interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/** What the test's server answers one request with: a status, headers and the raw body, or a dropped connection. */
type Answer = { status: number; headers?: Record<string, string>; body: string; delayMs?: number };
type Reply = Answer | "drop";

/**
 * A local HTTP server answering like the API (its envelopes, written byte for byte as Fastify's schema
 * serializer writes them: integers bare, also above 2^53), scripted per test: `replies` are used in order,
 * the last one again for any further request. It records every request it saw.
 */
class ScriptedApi {
  readonly seen: Seen[] = [];
  replies: Reply[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<ScriptedApi> {
    let api: ScriptedApi | undefined;
    const server = createServer((request, response) => void api!.#answer(request, response));
    api = new ScriptedApi(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return api;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  client(options: Partial<AvnClientOptions> = {}): AvnClient {
    return new AvnClient({ baseUrl: this.baseUrl, apiKey: API_KEY, ...options });
  }

  reset(...replies: Reply[]): void {
    this.seen.length = 0;
    this.replies = replies;
  }

  async #answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let body = "";
    for await (const chunk of request) body += String(chunk);
    this.seen.push({
      method: request.method ?? "",
      url: request.url ?? "",
      authorization: request.headers.authorization,
      contentType: request.headers["content-type"],
      body,
    });
    const reply = this.replies[Math.min(this.seen.length - 1, this.replies.length - 1)];
    if (reply === "drop") {
      request.socket.destroy();
      return;
    }
    if (reply.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (response.destroyed) return;
    response.writeHead(reply.status, { "content-type": "application/json; charset=utf-8", ...reply.headers });
    response.end(reply.body);
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** The API's error envelope. */
function error(status: number, message: string, headers?: Record<string, string>): Answer {
  return { status, headers, body: JSON.stringify({ status, message }) };
}

/** A 200 envelope: `data` is raw JSON text, so that integers above 2^53 are written as the API writes them. */
function ok(message: string, data: string): Answer {
  return { status: 200, body: `{"status":200,"message":${JSON.stringify(message)},"data":${data}}` };
}

const evmData = (balance: bigint, extra = "") =>
  `{"user_address":"${OWNER}","asset":{"balance":${balance},"QueryResult":"${`0x${balance.toString(16).padStart(64, "0")}`}"}${extra}}`;

/** `data.attestation` as the API serves it (docs/api.md, "Attested answers"). */
const ATTESTATION_JSON = {
  domain: {
    name: "Asset Verification Network",
    version: "1",
    chainId: 901,
    verifyingContract: "0x5FbDB2315678afecb367f032bb115d0BD9f0E0a8",
  },
  message: {
    chain: "0",
    owner: `0x${"0".repeat(24)}${OWNER.slice(2)}`,
    asset: `0x${"0".repeat(24)}${TOKEN.slice(2)}`,
    balance: ABOVE_2_53.toString(),
    queryResultHash: `0x${"ab".repeat(32)}`,
    sourceBlock: "1234",
    issuedAt: "1763900000",
  },
  signatures: [{ signer: "0x90F79bf6EB2c4f870365E785982E1f101E93b906", licenseIds: ["1"], signature: `0x${"11".repeat(65)}` }],
};

/** The call's error: it must fail with an AvnApiError. */
async function failureOf(call: Promise<unknown>): Promise<AvnApiError> {
  const outcome = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(outcome, "the call should have failed").to.be.instanceOf(AvnApiError);
  return outcome as AvnApiError;
}

describe("@avn/sdk AvnClient", function () {
  let api: ScriptedApi;
  before(async function () {
    api = await ScriptedApi.start();
  });
  after(async function () {
    await api.close();
  });

  describe("balances with exact integers", function () {
    it("reads an ERC-20 balance above 2^53 exactly, in the result and in the envelope", async function () {
      api.reset(ok(SUCCESS_MESSAGE, evmData(ABOVE_2_53)));
      const result = await api.client().evmBalance({ userAddress: OWNER, contractAddress: TOKEN });
      expect(result.balance).to.equal(ABOVE_2_53);
      expect(result.queryResult).to.equal(QUERY_RESULT);
      expect(result.response.data.asset.balance).to.equal(ABOVE_2_53);
      expect(result.response.status).to.equal(200);
      expect(result.response.message).to.equal(SUCCESS_MESSAGE);
      expect(result).to.not.have.property("attestation");
      expect(result).to.not.have.property("proof");
      // A double would have rounded it: the reviver is what keeps it.
      expect(BigInt(JSON.parse(`${ABOVE_2_53}`) as number)).to.not.equal(ABOVE_2_53);

      expect(api.seen).to.have.length(1);
      const [request] = api.seen;
      expect(request.method).to.equal("POST");
      expect(request.url).to.equal("/api/ccq-evm");
      expect(request.authorization).to.equal(API_KEY);
      expect(request.contentType).to.equal("application/json");
      expect(JSON.parse(request.body)).to.deep.equal({ user_address: OWNER, contract_address: TOKEN });
    });

    it("keeps small integers as numbers and exact ones beyond 2^53 as bigints, also negative and nested", function () {
      const parsed = parseJsonExact(
        '{"a":9007199254740991,"b":9007199254740993,"c":[-9007199254740993,1.5,1e-21,0],"d":"9007199254740993","e":115792089237316195423570985008687907853269984665640564039457584007913129639935}',
      );
      expect(parsed).to.deep.equal({
        a: 9007199254740991,
        b: 9007199254740993n,
        c: [-9007199254740993n, 1.5, 1e-21, 0],
        d: "9007199254740993",
        e: 2n ** 256n - 1n,
      });
    });

    it("refuses, as malformed JSON, a fraction or an exponent that reads as an integer of 2^52 or more", async function () {
      for (const text of [
        "4503599627370496.5",
        "-4503599627370496.5",
        "4503599627370497.0",
        "9007199254740993.5",
        "4.5035996273704965e15",
        "1e21",
        "-1E300",
      ])
        expect(() => parseJsonExact(`{"balance":${text}}`), text).to.throw(
          SyntaxError,
          new RegExp(`JSON number ${text.replace(".", "\\.")} is not an integer literal`),
        );
      // Below 2^52 a double still holds the fraction; integer literals are read as ever.
      expect(parseJsonExact("[4503599627370495.5,4503599627370496,-4503599627370496,9007199254740992,1.5e-7,0.0]")).to.deep.equal([
        4503599627370495.5,
        4503599627370496,
        -4503599627370496,
        9007199254740992n,
        1.5e-7,
        0,
      ]);
      // In an answer: not the API's JSON, rather than a balance of 4503599627370496.
      api.reset(ok(SUCCESS_MESSAGE, `{"user_address":"${OWNER}","asset":{"balance":4503599627370496.5,"QueryResult":"0x"}}`));
      const failure = await failureOf(api.client().evmBalance({ userAddress: OWNER, contractAddress: TOKEN }));
      expect(failure.status).to.equal(200);
      expect(failure.code).to.equal("HTTP_200");
      expect(failure.message).to.match(/^HTTP 200: the answer is not the API's JSON/);
      expect(failure.cause).to.be.instanceOf(SyntaxError);
      expect(api.seen).to.have.length(1);
    });

    it("refuses to parse, naming the supported runtimes, where JSON.parse gives revivers no source text", async function () {
      const original = JSON.parse;
      // A runtime without "JSON.parse source text access": the reviver gets two arguments.
      JSON.parse = ((text: string, reviver?: (key: string, value: unknown) => unknown) =>
        original(text, reviver === undefined ? undefined : (key, value) => reviver(key, value))) as typeof JSON.parse;
      try {
        expect(() => parseJsonExact('{"balance":1}'))
          .to.throw(UnsupportedRuntimeError, /Node\.js 22 or newer.*Chrome and Edge 114\+/)
          .with.property("code", "UNSUPPORTED_RUNTIME");
        // A client's call reports it as it is: not an API failure, and not worth retrying.
        api.reset(ok(SUCCESS_MESSAGE, evmData(1n)));
        const refused = await api
          .client()
          .evmBalance({ userAddress: OWNER, contractAddress: TOKEN })
          .catch((caught: unknown) => caught);
        expect(refused).to.be.instanceOf(UnsupportedRuntimeError).and.be.instanceOf(AvnError);
        expect(api.seen).to.have.length(1);
      } finally {
        JSON.parse = original;
      }
      // The reviver alone, called without a context, never rounds either.
      expect(() => reviveExactIntegers("balance", 9007199254740992)).to.throw(UnsupportedRuntimeError, /source text access/);
      expect(reviveExactIntegers("balance", 183)).to.equal(183);
    });

    it("asks for an ERC-1155 balance with token_id, and for an attested answer with ?attest=true", async function () {
      api.reset(ok(SUCCESS_MESSAGE, evmData(7n, `,"token_id":"7"`)));
      const result = await api.client().evmBalance({ userAddress: OWNER, contractAddress: TOKEN, tokenId: 7n });
      expect(result.balance).to.equal(7n);
      expect(result.response.data.token_id).to.equal("7");
      expect(JSON.parse(api.seen[0].body)).to.deep.equal({ user_address: OWNER, contract_address: TOKEN, token_id: "7" });

      api.reset(ok(SUCCESS_MESSAGE, evmData(ABOVE_2_53, `,"attestation":${JSON.stringify(ATTESTATION_JSON)}`)));
      const attested = await api.client().evmBalance({ userAddress: OWNER, contractAddress: TOKEN }, { attest: true });
      expect(api.seen[0].url).to.equal("/api/ccq-evm?attest=true");
      expect(attested.balance).to.equal(ABOVE_2_53);
      expect(attested.attestation).to.deep.equal(ATTESTATION_JSON);
    });

    it("returns a storage proof with ?proof=true, its slot as a bigint, an exclusion proof, and one at a block_number", async function () {
      const slot = 2n ** 256n - 12_345n; // an ERC-7201 slot is near 2^256
      const proof = `{"blockNumber":21000000,"blockHash":"0x${"cd".repeat(32)}","balancesSlot":"${slot}","included":true,"encoded":"0x${"ef".repeat(40)}"}`;
      api.reset(ok(SUCCESS_MESSAGE, evmData(ABOVE_2_53, `,"proof":${proof}`)));
      const proved = await api.client().evmBalance({ userAddress: OWNER, contractAddress: TOKEN }, { proof: true });
      expect(api.seen[0].url).to.equal("/api/ccq-evm?proof=true");
      expect(proved.proof).to.deep.equal({
        blockNumber: 21_000_000n,
        blockHash: `0x${"cd".repeat(32)}`,
        balancesSlot: slot,
        included: true,
        encoded: `0x${"ef".repeat(40)}`,
      });

      const exclusion = `{"blockNumber":20999000,"blockHash":"0x${"ab".repeat(32)}","anchorBlockNumber":21000000,"balancesSlot":"0","included":false,"encoded":"0x${"ef".repeat(40)}"}`;
      api.reset(ok(SUCCESS_MESSAGE, evmData(0n, `,"proof":${exclusion}`)));
      const zero = await api.client().evmBalance({ userAddress: OWNER, contractAddress: TOKEN }, { proof: true, blockNumber: 20_999_000n });
      expect(JSON.parse(api.seen[0].body)).to.deep.equal({ user_address: OWNER, contract_address: TOKEN, block_number: "20999000" });
      expect(zero.balance).to.equal(0n);
      expect(zero.proof).to.deep.include({ blockNumber: 20_999_000n, anchorBlockNumber: 21_000_000n, balancesSlot: 0n, included: false });

      api.reset(ok(SUCCESS_MESSAGE, evmData(0n, `,"proof":null`)));
      let failure: unknown;
      await api
        .client()
        .evmBalance({ userAddress: OWNER, contractAddress: TOKEN }, { proof: true })
        .catch((error: unknown) => (failure = error));
      expect((failure as Error).message).to.match(/data\.proof is missing/);
    });

    it("reads a Solana balance with the ccq-svm field names, an empty QueryResult for no account", async function () {
      api.reset(ok(SUCCESS_MESSAGE, `{"owner_address":"${SOLANA_OWNER}","asset":{"balance":0,"QueryResult":""}}`));
      const result = await api.client().svmBalance({ ownerAddress: SOLANA_OWNER, tokenMintAddress: SOLANA_MINT });
      expect(result.balance).to.equal(0n);
      expect(result.queryResult).to.equal("");
      expect(api.seen[0].url).to.equal("/api/ccq-svm");
      expect(JSON.parse(api.seen[0].body)).to.deep.equal({ owner_address: SOLANA_OWNER, token_mint_address: SOLANA_MINT });
    });

    it("refuses a 200 answer without the fields its route writes, as an AvnApiError", async function () {
      api.reset(ok(SUCCESS_MESSAGE, `{"user_address":"${OWNER}","asset":{"balance":"183","QueryResult":"0x"}}`));
      const failure = await failureOf(api.client().evmBalance({ userAddress: OWNER, contractAddress: TOKEN }));
      expect([failure.status, failure.code]).to.deep.equal([200, "HTTP_200"]);
      expect(failure.message).to.equal("Unexpected answer from the API: data.asset.balance is not an integer");
    });
  });

  describe("retries", function () {
    it("waits out a 429's Retry-After, then answers", async function () {
      api.reset(error(429, RATE_LIMITED_ENTRY.message, { "retry-after": "1" }), ok(SUCCESS_MESSAGE, evmData(ABOVE_2_53)));
      const started = performance.now();
      const result = await api.client().evmBalance({ userAddress: OWNER, contractAddress: TOKEN });
      const elapsed = performance.now() - started;
      expect(result.balance).to.equal(ABOVE_2_53);
      expect(api.seen).to.have.length(2);
      expect(elapsed).to.be.at.least(990).and.below(2_500);
    });

    it("retries a 503 and a dropped connection, up to `retries` times, then throws the last error", async function () {
      api.reset(
        error(503, "Attestation quorum not reached within 3000 ms", { "retry-after": "0" }),
        "drop",
        ok(SUCCESS_MESSAGE, evmData(5n)),
      );
      expect((await api.client({ retries: 2 }).evmBalance({ userAddress: OWNER, contractAddress: TOKEN })).balance).to.equal(5n);
      expect(api.seen).to.have.length(3);

      api.reset(error(503, "Attested answers are briefly unavailable", { "retry-after": "0" }));
      const failure = await failureOf(api.client({ retries: 2 }).evmBalance({ userAddress: OWNER, contractAddress: TOKEN }));
      expect(api.seen).to.have.length(3);
      expect([failure.status, failure.message, failure.retryAfter]).to.deep.equal([503, "Attested answers are briefly unavailable", 0]);
      expect(failure.code).to.equal("UNAVAILABLE");

      api.reset(error(500, "Internal error: the balance could not be fetched"));
      await failureOf(api.client({ retries: 0 }).evmBalance({ userAddress: OWNER, contractAddress: TOKEN }));
      expect(api.seen).to.have.length(1);
    });

    it("never retries a 400, 401, 404 or 501, and carries the API's message", async function () {
      const refusals: Array<[number, string, string]> = [
        [400, "BAD_REQUEST", "user_address must be 0x followed by 40 hexadecimal digits"],
        [401, "UNAUTHORIZED", "Unknown API key"],
        [404, "NOT_FOUND", "No token found at the given address"],
        [422, "HTTP_422", "Unprocessable"],
        [501, "NOT_IMPLEMENTED", "Attested answers are not enabled on this server"],
      ];
      for (const [status, code, message] of refusals) {
        api.reset(error(status, message));
        const failure = await failureOf(api.client({ retries: 5 }).evmBalance({ userAddress: OWNER, contractAddress: TOKEN }));
        expect(api.seen, `HTTP ${status}`).to.have.length(1);
        expect(failure.name).to.equal("AvnApiError");
        expect(failure).to.be.instanceOf(AvnError);
        expect([failure.status, failure.code, failure.message, failure.retryAfter]).to.deep.equal([status, code, message, undefined]);
      }
    });

    it("throws a 429 at once when waiting cannot help: no Retry-After, or one beyond maxRetryAfter", async function () {
      // The API leaves Retry-After out for a batch larger than the key's bucket will ever hold.
      api.reset(error(429, "A batch of 101 items needs 101 rate-limit tokens and this key's bucket holds 100"));
      const larger = await failureOf(api.client().evmBatch([{ userAddress: OWNER, contractAddress: TOKEN }]));
      expect(api.seen).to.have.length(1);
      expect([larger.status, larger.code, larger.retryAfter]).to.deep.equal([429, "RATE_LIMITED", undefined]);

      // The monthly quota's Retry-After points to the next month.
      api.reset(error(429, "Monthly quota exceeded", { "retry-after": "1209600" }));
      const quota = await failureOf(api.client({ maxRetryAfter: 10 }).evmBalance({ userAddress: OWNER, contractAddress: TOKEN }));
      expect(api.seen).to.have.length(1);
      expect([quota.status, quota.message, quota.retryAfter]).to.deep.equal([429, "Monthly quota exceeded", 1_209_600]);
    });

    it("gives up on a silent server after its timeout and retries, status 0", async function () {
      api.reset({ ...ok(SUCCESS_MESSAGE, evmData(1n)), delayMs: 1_000 }, ok(SUCCESS_MESSAGE, evmData(2n)));
      const result = await api.client({ timeoutMs: 150 }).evmBalance({ userAddress: OWNER, contractAddress: TOKEN });
      expect(result.balance).to.equal(2n);
      expect(api.seen).to.have.length(2);

      api.reset({ ...ok(SUCCESS_MESSAGE, evmData(1n)), delayMs: 1_000 });
      const failure = await failureOf(
        api.client({ timeoutMs: 150, retries: 1 }).evmBalance({ userAddress: OWNER, contractAddress: TOKEN }),
      );
      expect(api.seen).to.have.length(2);
      expect([failure.status, failure.code]).to.deep.equal([0, "NETWORK"]);
      expect(failure.message).to.equal("Could not reach the API: no answer within 150 ms");
      expect(failure.cause).to.be.instanceOf(Error);
    });

    it("reports a proxy's HTML error page as not the API's JSON, after retrying it as a 5xx", async function () {
      api.reset({ status: 502, headers: { "content-type": "text/html" }, body: "<html><body>Bad Gateway</body></html>" });
      const failure = await failureOf(api.client({ retries: 1 }).evmBalance({ userAddress: OWNER, contractAddress: TOKEN }));
      expect(api.seen).to.have.length(2);
      expect([failure.status, failure.code]).to.deep.equal([502, "BAD_GATEWAY"]);
      expect(failure.message).to.equal("HTTP 502: the answer is not the API's JSON (text/html)");
    });

    it("stops retrying when the caller aborts, with the caller's reason", async function () {
      api.reset(error(503, "Attestation quorum not reached within 3000 ms", { "retry-after": "5" }));
      const controller = new AbortController();
      const call = api.client().evmBalance({ userAddress: OWNER, contractAddress: TOKEN }, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error("the user left")), 100);
      const started = performance.now();
      const outcome = await call.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect((outcome as Error).message).to.equal("the user left");
      expect(performance.now() - started).to.be.below(1_000);
      expect(api.seen).to.have.length(1);
    });

    it("reads Retry-After as delta seconds or as an HTTP date", function () {
      const now = Date.parse("2026-11-30T23:59:30Z");
      expect(parseRetryAfter("7", now)).to.equal(7);
      expect(parseRetryAfter("Tue, 01 Dec 2026 00:00:00 GMT", now)).to.equal(30);
      expect(parseRetryAfter("soon", now)).to.equal(undefined);
      expect(parseRetryAfter(null, now)).to.equal(undefined);
    });

    it("refuses a retry count that is not an integer of 0 or more, or no fetch, naming the option", function () {
      for (const retries of [-1, 1.5, Number.NaN])
        expect(() => api.client({ retries }), String(retries))
          .to.throw(InvalidArgumentError, "options.retries must be a non-negative integer")
          .that.includes({ code: "INVALID_ARGUMENT", argument: "options.retries" });
      const { fetch } = globalThis;
      try {
        // A runtime without fetch, and none passed.
        (globalThis as { fetch?: typeof fetch }).fetch = undefined;
        expect(() => api.client())
          .to.throw(InvalidArgumentError, "pass options.fetch")
          .with.property("argument", "options.fetch");
      } finally {
        globalThis.fetch = fetch;
      }
    });

    it("sends through an injected fetch", async function () {
      const urls: string[] = [];
      const fetch: typeof globalThis.fetch = (input, init) => {
        urls.push(input instanceof Request ? input.url : input.toString());
        return globalThis.fetch(input, init);
      };
      api.reset(ok(SUCCESS_MESSAGE, evmData(3n)));
      const client = new AvnClient({ baseUrl: `${api.baseUrl}/`, apiKey: API_KEY, fetch });
      expect((await client.evmBalance({ userAddress: OWNER, contractAddress: TOKEN })).balance).to.equal(3n);
      expect(urls).to.deep.equal([`${api.baseUrl}/api/ccq-evm`]);
    });
  });

  describe("batches", function () {
    it("answers each EVM item with its status, a bigint balance on 200 and the message otherwise", async function () {
      const results = [
        `{"status":200,"message":"${SUCCESS_MESSAGE}","data":${evmData(ABOVE_2_53)}}`,
        `{"status":400,"message":"user_address must be 0x followed by 40 hexadecimal digits"}`,
        `{"status":404,"message":"No token found at the given address"}`,
        `{"status":429,"message":"${RATE_LIMITED_ENTRY.message}"}`,
      ];
      api.reset(ok(BATCH_SUCCESS_MESSAGE, `{"blockNumber":21000000,"results":[${results.join(",")}]}`));
      const items = [
        { userAddress: OWNER, contractAddress: TOKEN },
        { userAddress: "0x1234", contractAddress: TOKEN },
        { userAddress: OWNER, contractAddress: "0x000000000000000000000000000000000000dEaD", tokenId: "7" },
        { userAddress: OWNER, contractAddress: TOKEN },
      ];
      const batch = await api.client().evmBatch(items, { partial: true });
      expect(api.seen[0].url).to.equal("/api/ccq-evm/batch?partial=true");
      expect(JSON.parse(api.seen[0].body)).to.deep.equal([
        { user_address: OWNER, contract_address: TOKEN },
        { user_address: "0x1234", contract_address: TOKEN },
        { user_address: OWNER, contract_address: "0x000000000000000000000000000000000000dEaD", token_id: "7" },
        { user_address: OWNER, contract_address: TOKEN },
      ]);
      expect(batch.blockNumber).to.equal(21_000_000n);
      expect(batch.results).to.deep.equal([
        { ok: true, status: 200, message: SUCCESS_MESSAGE, balance: ABOVE_2_53, queryResult: QUERY_RESULT },
        { ok: false, status: 400, message: "user_address must be 0x followed by 40 hexadecimal digits" },
        { ok: false, status: 404, message: "No token found at the given address" },
        { ok: false, status: 429, message: RATE_LIMITED_ENTRY.message },
      ]);
      expect(batch.response.data.results[0].data?.asset.balance).to.equal(ABOVE_2_53);
    });

    it("answers Solana items at the stated slot, and passes attest on to the API, which refuses it", async function () {
      const entry = `{"status":200,"message":"${SUCCESS_MESSAGE}","data":{"owner_address":"${SOLANA_OWNER}","asset":{"balance":18446744073709551615,"QueryResult":"00ff"}}}`;
      api.reset(ok(BATCH_SUCCESS_MESSAGE, `{"slot":9007199254740993,"results":[${entry}]}`));
      const batch = await api.client().svmBatch([{ ownerAddress: SOLANA_OWNER, tokenMintAddress: SOLANA_MINT }]);
      expect(batch.slot).to.equal(9007199254740993n);
      expect(batch.results).to.deep.equal([
        { ok: true, status: 200, message: SUCCESS_MESSAGE, balance: 2n ** 64n - 1n, queryResult: "00ff" },
      ]);
      expect(api.seen[0].url).to.equal("/api/ccq-svm/batch");
      expect(JSON.parse(api.seen[0].body)).to.deep.equal([{ owner_address: SOLANA_OWNER, token_mint_address: SOLANA_MINT }]);

      api.reset(error(400, ATTEST_NOT_SUPPORTED));
      const refused = await failureOf(
        api.client().svmBatch([{ ownerAddress: SOLANA_OWNER, tokenMintAddress: SOLANA_MINT }], { attest: true }),
      );
      expect(api.seen.map(({ url }) => url)).to.deep.equal(["/api/ccq-svm/batch?attest=true"]);
      expect([refused.status, refused.message]).to.deep.equal([400, ATTEST_NOT_SUPPORTED]);
    });
  });

  describe("conditions", function () {
    it("sends the request as given and reads the verdict, its positions and leaves exactly", async function () {
      const request = {
        owners: { ethereum: OWNER },
        condition: { all: [{ chain: "ethereum" as const, contract_address: TOKEN, min: "9007199254753337" }] },
        reveal: true,
      };
      const attestation = {
        domain: ATTESTATION_JSON.domain,
        message: {
          conditionHash: `0x${"12".repeat(32)}`,
          ownersHash: `0x${"34".repeat(32)}`,
          verdict: true,
          ethereumBlock: "1234",
          solanaSlot: "0",
          issuedAt: "1763900000",
        },
        signatures: ATTESTATION_JSON.signatures,
      };
      const leaf = `{"chain":"ethereum","contract_address":"${TOKEN}","min":"9007199254753337","balance":${ABOVE_2_53},"QueryResult":"${QUERY_RESULT}","holds":true}`;
      api.reset(
        ok(
          CONDITION_SUCCESS_MESSAGE,
          `{"verdict":true,"conditionHash":"0x${"12".repeat(32)}","ownersHash":"0x${"34".repeat(32)}","sourceBlocks":{"ethereum":1234},` +
            `"leaves":[${leaf}],"attestation":${JSON.stringify(attestation)}}`,
        ),
      );
      const verdict = await api.client().conditions(request, { attest: true });
      expect(api.seen[0].url).to.equal("/api/conditions?attest=true");
      expect(JSON.parse(api.seen[0].body)).to.deep.equal(request);
      expect(verdict.verdict).to.equal(true);
      expect(verdict.conditionHash).to.equal(`0x${"12".repeat(32)}`);
      expect(verdict.sourceBlocks).to.deep.equal({ ethereum: 1234n });
      expect(verdict.leaves).to.deep.equal([
        { chain: "ethereum", contractAddress: TOKEN, min: "9007199254753337", balance: ABOVE_2_53, queryResult: QUERY_RESULT, holds: true },
      ]);
      expect(verdict.attestation).to.deep.equal(attestation);
    });
  });
});
