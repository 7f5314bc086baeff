import { AvnError } from "@avn/protocol/errors";
import { expect } from "chai";

import {
  MAX_WEBHOOK_URL_LENGTH,
  WebhookUrlError,
  checkWebhookDestination,
  isPublicAddress,
  parseWebhookUrl,
  type WebhookHostLookup,
} from "../../../../src/api/webhooks/url-guard.ts";

/** The error `run` throws (or rejects with), asserted to be a WebhookUrlError naming the field. */
async function urlErrorOf(run: () => unknown): Promise<WebhookUrlError> {
  let thrown: unknown;
  try {
    await run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).to.be.instanceOf(WebhookUrlError);
  expect(thrown).to.be.instanceOf(AvnError);
  const error = thrown as WebhookUrlError;
  expect(error).to.include({ name: "WebhookUrlError", code: "WEBHOOK_URL", field: "url" });
  expect(error.message).to.match(/^url/);
  return error;
}

/** A lookup that answers from a table and records the names it was asked. */
function tableLookup(table: Record<string, string[]>): WebhookHostLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (hostname: string) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses;
  };
  return Object.assign(lookup, { asked });
}

const PRIVATE = /private, loopback or link-local/;

describe("webhook URLs: the SSRF guard", function () {
  describe("parseWebhookUrl", function () {
    it("accepts http and https URLs with a host, port, path and query", function () {
      expect(parseWebhookUrl("https://hooks.example.com/avn?token=x").href).to.equal("https://hooks.example.com/avn?token=x");
      expect(parseWebhookUrl("http://hooks.example.com:8080/").port).to.equal("8080");
      expect(parseWebhookUrl("http://[2606:4700::1111]/").hostname).to.equal("[2606:4700::1111]");
    });

    it("test_RevertWhen_SchemeNotHttp: ftp, file, javascript, data", async function () {
      for (const raw of ["ftp://example.com/", "file:///etc/passwd", "javascript:alert(1)", "data:,x", "ws://example.com/"]) {
        expect((await urlErrorOf(() => parseWebhookUrl(raw))).message, raw).to.equal("url must use http:// or https://");
      }
    });

    it("test_RevertWhen_UserInfo: a user name or password", async function () {
      for (const raw of ["https://user:pass@example.com/", "https://user@example.com/", "https://:pass@example.com/"]) {
        expect((await urlErrorOf(() => parseWebhookUrl(raw))).message, raw).to.equal("url must not contain a user name or password");
      }
    });

    it("test_RevertWhen_TooLong: more than 2048 characters", async function () {
      const base = "https://example.com/";
      const longest = base + "a".repeat(MAX_WEBHOOK_URL_LENGTH - base.length);
      expect(parseWebhookUrl(longest).href).to.have.length(2048);
      expect((await urlErrorOf(() => parseWebhookUrl(`${longest}a`))).message).to.equal("url must be at most 2048 characters");
    });

    it("test_RevertWhen_NotAUrl or empty", async function () {
      for (const raw of ["", "example.com/hook", "/relative", "https://", "http://exa mple.com/"]) {
        await urlErrorOf(() => parseWebhookUrl(raw));
      }
    });
  });

  describe("isPublicAddress", function () {
    it("calls plain unicast public, IPv4 and IPv6", function () {
      for (const ip of ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700::1111", "2001:4860:4860::8888"]) {
        expect(isPublicAddress(ip), ip).to.equal(true);
      }
    });

    it("refuses loopback, private, link-local, CGNAT, unique-local, special and mapped addresses", function () {
      const refused = [
        ["127.0.0.1", "loopback"],
        ["127.255.0.9", "loopback"],
        ["10.0.0.1", "private"],
        ["172.16.5.4", "private"],
        ["192.168.1.1", "private"],
        ["169.254.169.254", "link-local (cloud metadata)"],
        ["100.64.0.1", "carrier-grade NAT"],
        ["0.0.0.0", "unspecified"],
        ["255.255.255.255", "broadcast"],
        ["224.0.0.1", "multicast"],
        ["192.0.2.1", "documentation (reserved)"],
        ["240.0.0.1", "reserved"],
        ["::1", "IPv6 loopback"],
        ["::", "IPv6 unspecified"],
        ["fc00::1", "unique-local"],
        ["fd12:3456::1", "unique-local"],
        ["fe80::1", "IPv6 link-local"],
        ["fe80::1%eth0", "IPv6 link-local with a zone"],
        ["ff02::1", "IPv6 multicast"],
        ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
        ["::ffff:10.0.0.1", "IPv4-mapped private"],
        ["::ffff:7f00:1", "IPv4-mapped loopback, hex form"],
        ["::7f00:1", "IPv4-compatible (::/96) loopback"],
        ["64:ff9b::a00:1", "NAT64 (rfc6052) of 10.0.0.1"],
        ["2002:7f00:1::", "6to4 of 127.0.0.1"],
        ["2001::1", "Teredo"],
        ["2001:db8::1", "documentation"],
        ["not-an-ip", "not an address"],
        ["", "empty"],
      ];
      for (const [ip, why] of refused) expect(isPublicAddress(ip), `${ip}: ${why}`).to.equal(false);
    });

    it("judges an IPv4-mapped address as its IPv4 address", function () {
      expect(isPublicAddress("::ffff:8.8.8.8")).to.equal(true);
      expect(isPublicAddress("::ffff:169.254.169.254")).to.equal(false);
    });
  });

  describe("checkWebhookDestination", function () {
    const check = (raw: string, allowPrivate: boolean, lookup?: WebhookHostLookup) =>
      checkWebhookDestination(parseWebhookUrl(raw), { allowPrivate, lookup });

    it("test_RevertWhen_LiteralPrivate: 127.0.0.1, 10.x, [::1], [::ffff:127.0.0.1], 169.254.169.254, without a lookup", async function () {
      const lookup = tableLookup({});
      for (const raw of [
        "http://127.0.0.1:8080/",
        "http://10.0.0.1/",
        "http://[::1]:3000/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0x7f.1/", // WHATWG URL normalizes it to 127.0.0.1
        "http://2130706433/",
      ]) {
        expect((await urlErrorOf(() => check(raw, false, lookup))).message, raw).to.match(PRIVATE);
      }
      expect(lookup.asked, "literal addresses are never looked up").to.deep.equal([]);
    });

    it("test_RevertWhen_NameResolvesPrivate: any address of the name, even one among public ones", async function () {
      const lookup = tableLookup({
        "evil.example": ["10.1.2.3"],
        "mixed.example": ["8.8.8.8", "127.0.0.1"],
        "v6.example": ["2606:4700::1111", "fe80::1"],
        "good.example": ["8.8.8.8", "2606:4700::1111"],
      });
      for (const raw of ["http://evil.example/", "https://mixed.example/", "https://v6.example/"]) {
        expect((await urlErrorOf(() => check(raw, false, lookup))).message, raw).to.match(PRIVATE);
      }
      await check("https://good.example/hook", false, lookup);
      expect(lookup.asked).to.deep.equal(["evil.example", "mixed.example", "v6.example", "good.example"]);
    });

    it("test_RevertWhen_LocalhostResolvesLoopback: the system resolver's own answer", async function () {
      expect((await urlErrorOf(() => check("http://localhost:8080/", false))).message).to.match(PRIVATE);
    });

    it("test_RevertWhen_NameDoesNotResolve", async function () {
      const lookup = tableLookup({ "empty.example": [] });
      for (const raw of ["https://nowhere.example/", "https://empty.example/"]) {
        expect((await urlErrorOf(() => check(raw, false, lookup))).message, raw).to.equal("url's host does not resolve");
        expect((await urlErrorOf(() => check(raw, true, lookup))).message, raw).to.equal("url's host does not resolve");
      }
    });

    it("lets private addresses through with allowPrivate (WEBHOOK_ALLOW_PRIVATE=true)", async function () {
      await check("http://127.0.0.1:8080/", true);
      await check("http://[::1]:8080/", true);
      await check("http://evil.example/", true, tableLookup({ "evil.example": ["10.1.2.3"] }));
      await check("http://localhost/", true);
    });
  });
});
