import { expect } from "chai";

import { describeError } from "../../../src/common/describe-error.ts";

describe("describeError: one line for people, without URLs or secrets", function () {
  const PRIVATE_KEY = `0x${"ab12".repeat(16)}`;

  it("replaces http, https, ws and wss URLs, with credentials, paths and query strings, keeping the sentence", function () {
    const error = new Error(
      "no answer from https://user:PASSWORD@eth.example/v2/PATH-KEY?apiKey=QUERY-KEY, nor http://backup.example:8545/rpc; " +
        "ws://u:WS-PASS@ws.example/KEY and (wss://sol.example/?api-key=WSS-KEY) failed.",
    );
    const text = describeError(error);
    expect(text).to.equal("no answer from <url>, nor <url>; <url> and (<url>) failed.");
  });

  it("replaces API keys in a query string or key=value text without a URL around them", function () {
    expect(describeError(new Error("refused ?api-key=K1&chain=1 (apikey=K2, token=K3, access_token=K4, password=K5)"))).to.equal(
      "refused ?api-key=<redacted>&chain=1 (apikey=<redacted>, token=<redacted>, access_token=<redacted>, password=<redacted>)",
    );
    expect(describeError(new Error("sent Authorization: Bearer SECRET-TOKEN"))).to.equal("sent Authorization: Bearer <redacted>");
    expect(describeError(new Error(`key avn_${"x".repeat(43)} refused`))).to.equal("key <api-key> refused");
  });

  it("replaces bare hostnames and addresses with a port, and credentials written without a scheme", function () {
    expect(describeError(new Error("connect ECONNREFUSED 127.0.0.1:9"))).to.equal("connect ECONNREFUSED <host>");
    expect(describeError(new Error("getaddrinfo ENOTFOUND rpc.provider.example:443"))).to.equal("getaddrinfo ENOTFOUND <host>");
    expect(describeError(new Error("connect ECONNREFUSED [::1]:8545 and localhost:8545"))).to.equal(
      "connect ECONNREFUSED <host> and <host>",
    );
    expect(describeError(new Error("login as avn:DB-PASSWORD@db.example:5432 refused"))).to.equal("login as <host> refused");
  });

  it("replaces private keys and long hex secrets, keeps addresses", function () {
    const address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    const text = describeError(new Error(`wallet ${PRIVATE_KEY} for ${address}, secret ${"f00d".repeat(10)} and ${PRIVATE_KEY.slice(2)}`));
    expect(text).to.equal(`wallet <hex> for ${address}, secret <hex> and <hex>`);
  });

  it("prefers ethers' short message and drops the details ethers appends (they may echo an argument)", function () {
    const v6 = Object.assign(
      new Error(`invalid private key (argument="privateKey", value="${PRIVATE_KEY}", code=INVALID_ARGUMENT, version=6.13.4)`),
      {
        shortMessage: "invalid private key",
        code: "INVALID_ARGUMENT",
      },
    );
    expect(describeError(v6)).to.equal("invalid private key (INVALID_ARGUMENT)");
    const v5 = Object.assign(new Error('bad response (status=500, url="https://rpc.example/KEY", code=SERVER_ERROR, version=web/5.8.0)'), {
      reason: "bad response",
      code: "SERVER_ERROR",
    });
    expect(describeError(v5)).to.equal("bad response (SERVER_ERROR)");
    const unshortened = new Error(`invalid key (argument="key", value="${PRIVATE_KEY}", code=INVALID_ARGUMENT, version=6.13.4)`);
    expect(describeError(unshortened)).to.equal("invalid key");
  });

  it("follows cause chains and ethers' nested error, each redacted, without repeating itself or looping", function () {
    const socket = Object.assign(new Error("connect ECONNREFUSED 10.0.0.7:8545"), { code: "ECONNREFUSED" });
    const fetchFailed = new Error("fetch failed", { cause: socket });
    expect(describeError(new Error("request to https://rpc.example/KEY failed", { cause: fetchFailed }))).to.equal(
      "request to <url> failed: fetch failed: connect ECONNREFUSED <host>",
    );
    const coalesced = Object.assign(new Error("long"), {
      shortMessage: "could not coalesce error",
      error: { code: -32000, message: "execution reverted" },
    });
    expect(describeError(coalesced)).to.equal("could not coalesce error: execution reverted");
    const repeated = new Error("timeout", { cause: new Error("timeout") });
    expect(describeError(repeated)).to.equal("timeout");
    const cyclic = new Error("first") as Error & { cause?: unknown };
    cyclic.cause = new Error("second", { cause: cyclic });
    expect(describeError(cyclic)).to.equal("first: second");
  });

  it("describes non-Error values without throwing or dumping them", function () {
    expect(describeError("failed at https://rpc.example/KEY")).to.equal("failed at <url>");
    expect(describeError(42)).to.equal("42");
    expect(describeError(null)).to.equal("null");
    expect(describeError(undefined)).to.equal("undefined");
    expect(describeError({ privateKey: PRIVATE_KEY })).to.equal("non-error value (Object)");
    expect(describeError({ code: "ETIMEDOUT" })).to.equal("ETIMEDOUT");
    expect(describeError(new Error("first line\n    at https://rpc.example/KEY"))).to.equal("first line");
  });
});
