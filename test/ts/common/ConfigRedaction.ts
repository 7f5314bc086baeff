import { Writable } from "node:stream";

import { expect } from "chai";
import { pino } from "pino";
import { z } from "zod";

import { loadApiConfig, redactedConfig } from "../../../src/api/config.ts";
import { loadCreditsConfig, redactedCreditsConfig } from "../../../src/credits/config.ts";
import { loadNodeConfig, redactedNodeConfig } from "../../../src/node/config.ts";
import { logLevel, port, rpcUrl, rpcUrlList, serviceUrl, sourceChainFields } from "../../../src/common/config-fields.ts";
import { loggedAsOrigin, redactConfig, secret } from "../../../src/common/config-redaction.ts";
import { parseEnvironment } from "../../../src/common/environment.ts";

/** Every secret below contains this, so one search finds any of them in a log line. */
const SECRET = "L3AKED"; // not "SECRET": field names such as STRIPE_WEBHOOK_SECRET contain that
const PRIVATE_KEY = `0x${"5ec7".repeat(16)}`;

/** The start log line a service writes: pino's JSON of `{ config }`, as main.ts logs it. */
function startLogLine(config: Record<string, unknown>, message: string): string {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  pino({ level: "info" }, stream).info({ config }, message);
  expect(lines).to.have.length(1);
  return lines[0];
}

describe("configuration redaction, driven by the schema", function () {
  it("redacts a URL field added to a schema without anyone listing it, and secrets declared as such", function () {
    const schema = z.object({
      ...sourceChainFields,
      HTTP_PORT: port().default(8080),
      // New fields, declared with the shared helpers or as a plain z.url(): none is named anywhere else.
      PRICE_FEED_URL: rpcUrl(),
      ARCHIVE_RPC_URLS: rpcUrlList(),
      EVENTS_WS_URL: serviceUrl(/^wss?$/).optional(),
      WEBHOOK_URL: z.url(),
      CACHE_DB: loggedAsOrigin(z.string()),
      SIGNING_KEY: secret(z.string()),
      // Even a field declared as a plain string, by mistake, does not leak its URL or key.
      FORGOTTEN_URL: z.string(),
      FORGOTTEN_KEY: z.string(),
      LOG_LEVEL: logLevel(),
      NAME: z.string(),
    });
    const config = parseEnvironment(
      schema,
      {
        EVM_RPC_URLS: `https://eth.example/v2/${SECRET}-1,https://user:${SECRET}-2@backup.example:8443/rpc`,
        SOLANA_RPC_URLS: `https://sol.example/?api-key=${SECRET}-3`,
        PRICE_FEED_URL: `https://feed.example/${SECRET}-4`,
        ARCHIVE_RPC_URLS: `http://archive.example:8545/?key=${SECRET}-5`,
        EVENTS_WS_URL: `wss://:${SECRET}-6@ws.example/stream`,
        WEBHOOK_URL: `https://hooks.example/${SECRET}-7#frag`,
        CACHE_DB: `postgres://avn:${SECRET}-8@db.example:5432/cache`,
        SIGNING_KEY: `whsec_${SECRET}-9`,
        FORGOTTEN_URL: `redis://:${SECRET}-10@redis.example:6379`,
        FORGOTTEN_KEY: PRIVATE_KEY,
        NAME: "plain",
      },
      "test configuration",
    );
    const redacted = redactConfig(schema, config);
    expect(JSON.stringify(redacted)).to.not.include(SECRET).and.not.include(PRIVATE_KEY.slice(2));
    expect(redacted).to.deep.include({
      EVM_RPC_URLS: ["https://eth.example/…", "https://backup.example:8443/…"],
      SOLANA_RPC_URLS: ["https://sol.example/…"],
      PRICE_FEED_URL: "https://feed.example/…",
      ARCHIVE_RPC_URLS: ["http://archive.example:8545/…"],
      EVENTS_WS_URL: "wss://ws.example/…",
      WEBHOOK_URL: "https://hooks.example/…",
      CACHE_DB: "postgres://db.example:5432/…",
      SIGNING_KEY: "<set>",
      FORGOTTEN_URL: "redis://redis.example:6379/…",
      FORGOTTEN_KEY: "<set>",
      // What is not secret is shown as it is.
      HTTP_PORT: 8080,
      UPSTREAM_TIMEOUT_MS: 3_000,
      LOG_LEVEL: "info",
      NAME: "plain",
    });
    // An optional field left unset stays unset, and a file path where a URL may stand is not a URL.
    const withoutOptional = parseEnvironment(
      schema,
      { ...env(config), EVENTS_WS_URL: undefined, CACHE_DB: ".data/cache.sqlite" },
      "test configuration",
    );
    expect(redactConfig(schema, withoutOptional)).to.deep.include({ EVENTS_WS_URL: undefined, CACHE_DB: ".data/cache.sqlite" });
  });

  it("leaves no URL credential, path or API key in the API's start log line", function () {
    const config = loadApiConfig({
      EVM_RPC_URLS: `https://eth.example/v2/${SECRET}-1, https://user:${SECRET}-2@backup.example/rpc`,
      SOLANA_RPC_URLS: `https://sol.example/?api-key=${SECRET}-3`,
      REDIS_URL: `rediss://:${SECRET}-4@redis.example:6380`,
      API_KEYS_DB: `postgres://avn:${SECRET}-5@db.example:5432/keys`,
      ATTESTATION_L2_RPC_URL: `https://l2.example/${SECRET}-6?token=${SECRET}-7`,
      ATTESTATION_L2_WS_URL: `wss://l2-ws.example/v2/${SECRET}-8?token=${SECRET}-9`,
      ATTESTATION_NODE_REGISTRY: "0x2279B7A0a67DB372996a5FaB50D91eAA73d2eBe6",
      ATTESTATION_VERIFIER: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      HUB_BUS_SECRET: `${SECRET}-10-${"b".repeat(32)}`,
      API_WORKERS: "1",
    });
    const line = startLogLine(redactedConfig(config), "API configuration");
    expect(line).to.not.include(SECRET);
    expect((JSON.parse(line) as { config: Record<string, unknown> }).config).to.deep.include({ HUB_BUS_SECRET: "<set>" });
    for (const origin of [
      "https://eth.example/…",
      "https://backup.example/…",
      "rediss://redis.example:6380/…",
      "postgres://db.example:5432/…",
      "https://l2.example/…",
      "wss://l2-ws.example/…",
    ]) {
      expect(line).to.include(origin);
    }
  });

  describe("HUB_BUS_SECRET: the hub's Redis bus secret (issue 46)", function () {
    const sources = { EVM_RPC_URLS: "https://eth.example/", SOLANA_RPC_URLS: "https://sol.example/" };
    const hub = {
      ATTESTATION_L2_RPC_URL: "https://l2.example/",
      ATTESTATION_L2_WS_URL: "wss://l2.example/",
      ATTESTATION_NODE_REGISTRY: "0x2279B7A0a67DB372996a5FaB50D91eAA73d2eBe6",
      ATTESTATION_VERIFIER: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    };
    const redis = { REDIS_URL: "redis://redis.example:6379" };

    it("test_RevertWhen_RedisAndHubWithoutSecret: names the variable and how to make one", function () {
      expect(() => loadApiConfig({ ...sources, ...hub, ...redis })).to.throw(
        /HUB_BUS_SECRET: required with REDIS_URL when the attestation hub is on.*at least 32 characters.*openssl rand -hex 32/,
      );
    });

    it("test_RevertWhen_SecretShorterThan32: names the variable and the minimum, never the value", function () {
      const short = `${SECRET}-${"s".repeat(20)}`; // 27 characters
      let message = "";
      try {
        loadApiConfig({ ...sources, ...hub, ...redis, HUB_BUS_SECRET: short });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).to.match(/HUB_BUS_SECRET: at least 32 characters/);
      expect(message).to.not.include(SECRET);
    });

    it("is needed only where the bus is Redis: not without the hub, nor without REDIS_URL", function () {
      expect(loadApiConfig({ ...sources, ...redis }).HUB_BUS_SECRET).to.equal(undefined);
      expect(loadApiConfig({ ...sources, ...hub }).HUB_BUS_SECRET).to.equal(undefined);
      const secret = `${SECRET}-${"k".repeat(32)}`;
      const config = loadApiConfig({ ...sources, ...hub, ...redis, HUB_BUS_SECRET: secret });
      expect(config.HUB_BUS_SECRET).to.equal(secret);
      const line = startLogLine(redactedConfig(config), "API configuration");
      expect(line).to.not.include(SECRET);
      expect((JSON.parse(line) as { config: Record<string, unknown> }).config).to.deep.include({ HUB_BUS_SECRET: "<set>" });
    });
  });

  it("leaves no URL credential, path or API key in the node's start log line, and writes its bigints", function () {
    const config = loadNodeConfig({
      OWNERS_ALLOWLIST: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      L2_RPC_URLS: `https://l2.example/v1/${SECRET}-1`,
      L2_WS_URL: `wss://l2.example/ws/${SECRET}-2`,
      VERIFICATION_REGISTRY: "0x2279B7A0a67DB372996a5FaB50D91eAA73d2eBe6",
      EVM_RPC_URLS: `https://u:${SECRET}-3@eth.example/v2`,
      SOLANA_RPC_URLS: `https://sol.example/?api-key=${SECRET}-4`,
      ATTESTATION_HUB_URL: `wss://api.example/attest/ws?key=${SECRET}-5`,
      ATTESTATION_VERIFIER: "0x2279B7A0a67DB372996a5FaB50D91eAA73d2eBe6",
      NODE_HEALTH_PORT: "9100",
    });
    const line = startLogLine(redactedNodeConfig(config), "node configuration");
    expect(line).to.not.include(SECRET);
    const logged = (JSON.parse(line) as { config: Record<string, unknown> }).config;
    expect(logged).to.deep.include({
      L2_RPC_URLS: ["https://l2.example/…"],
      L2_WS_URL: "wss://l2.example/…",
      ATTESTATION_HUB_URL: "wss://api.example/…",
      MIN_BURNER_BALANCE_WEI: "5000000000000000",
      MAX_GAS_PER_TX: "8000000",
      NODE_HEALTH_PORT: 9100,
    });
  });

  it("shows the credits service's secrets as <set> only", function () {
    const config = loadCreditsConfig({
      STRIPE_WEBHOOK_SECRET: `whsec_${SECRET}-1`,
      STRIPE_SECRET_KEY: `sk_test_${SECRET}-2`,
      CREDITS_CATALOGUE: "catalogue.json",
      CREDITS_ISSUER_KEY: PRIVATE_KEY,
      CREDITS_L2_RPC_URL: `https://l2.example/${SECRET}-3`,
      CREDITS_CLAIMS_CONTRACT: "0x2279B7A0a67DB372996a5FaB50D91eAA73d2eBe6",
    });
    const line = startLogLine(redactedCreditsConfig(config), "starting the credits service");
    expect(line).to.not.include(SECRET).and.not.include(PRIVATE_KEY.slice(2));
    expect((JSON.parse(line) as { config: Record<string, unknown> }).config).to.deep.include({
      STRIPE_WEBHOOK_SECRET: "<set>",
      STRIPE_SECRET_KEY: "<set>",
      CREDITS_ISSUER_KEY: "<set>",
      CREDITS_L2_RPC_URL: "https://l2.example/…",
    });
  });
});

/** A parsed configuration back as the environment strings it came from (for a second parse). */
function env(config: Record<string, unknown>): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(config).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.join(",") : value === undefined ? undefined : String(value as string | number | boolean),
    ]),
  );
}
