import type { IncomingMessage } from "node:http";

import { expect } from "chai";

import { AdmissionGate } from "../../../src/api/attestation-hub/admission.ts";

/** A request as the HTTP server hands it to the upgrade handler: the socket's address and the headers. */
const requestFrom = (remoteAddress: string, headers: Record<string, string> = {}) =>
  ({ headers, socket: { remoteAddress } }) as unknown as IncomingMessage;

/** Enters `address` until the gate says no; returns how many entered and the refusal. */
function fill(gate: AdmissionGate, address: string): { entered: number; refusal: string } {
  for (let entered = 0; ; entered += 1) {
    const result = gate.enter(address);
    if (typeof result === "string") return { entered, refusal: result };
  }
}

describe("attestation hub: admission keys (issue 46, finding 3)", function () {
  describe("pending connections", function () {
    it("counts every address of one IPv6 /64 against one ATTESTATION_MAX_PENDING_PER_ADDRESS", function () {
      const gate = new AdmissionGate({ maxPending: 256, maxPendingPerAddress: 8 });
      // One subscriber's /64 holds 2^64 addresses: 8 pending in all, whichever interface ids it picks.
      for (let index = 1; index <= 8; index += 1) expect(gate.enter(`2001:db8:1:2::${index.toString(16)}`)).to.be.a("function");
      expect(gate.enter("2001:db8:1:2:ffff:ffff:ffff:ffff")).to.equal("address-cap");
      expect(gate.enter("2001:db8:1:2:1234:5678:9abc:def0")).to.equal("address-cap");
      expect(gate.pending).to.equal(8);
      // The next /64 has its own count.
      expect(gate.enter("2001:db8:1:3::1")).to.be.a("function");
    });

    it("cannot be filled from one /64: ATTESTATION_MAX_PENDING stays open to others", function () {
      const gate = new AdmissionGate({ maxPending: 256, maxPendingPerAddress: 8 });
      let taken = 0;
      for (let index = 0; index < 1_000; index += 1)
        if (typeof gate.enter(`2001:db8:aa:bb:${index.toString(16)}::1`) === "function") taken += 1;
      expect(taken).to.equal(8);
      expect(gate.pending).to.equal(8);
      expect(fill(gate, "2001:db8:cc:dd::1")).to.deep.equal({ entered: 8, refusal: "address-cap" });
    });

    it("reads an IPv6 address in any of its spellings: full, compressed, upper case, with a zone id", function () {
      const gate = new AdmissionGate({ maxPending: 256, maxPendingPerAddress: 4 });
      expect(gate.enter("2001:0db8:0000:0007:0000:0000:0000:0001")).to.be.a("function");
      expect(gate.enter("2001:db8:0:7::1")).to.be.a("function");
      expect(gate.enter("2001:DB8:0:7:0:0:0:2")).to.be.a("function");
      expect(gate.enter("2001:db8::7:0:0:0:3")).to.be.a("function");
      expect(gate.enter("2001:db8:0:7::4")).to.equal("address-cap");
      // Link-local addresses with a zone id: the zone is not part of the address.
      expect(fill(gate, "fe80::1%eth0").entered).to.equal(4);
      expect(gate.enter("fe80::2%lo")).to.equal("address-cap");
    });

    it("keeps IPv4 per address, an IPv4-mapped IPv6 address counting as its IPv4 address", function () {
      const gate = new AdmissionGate({ maxPending: 256, maxPendingPerAddress: 2 });
      expect(gate.enter("192.0.2.1")).to.be.a("function");
      expect(gate.enter("::ffff:192.0.2.1")).to.be.a("function");
      expect(gate.enter("::FFFF:c000:201")).to.equal("address-cap");
      expect(gate.enter("0:0:0:0:0:ffff:192.0.2.1")).to.equal("address-cap");
      // The next IPv4 address, even in the same /24, has its own count.
      expect(fill(gate, "192.0.2.2")).to.deep.equal({ entered: 2, refusal: "address-cap" });
    });

    it("frees a /64's slot when any of its connections is released", function () {
      const gate = new AdmissionGate({ maxPending: 256, maxPendingPerAddress: 2 });
      const first = gate.enter("2001:db8:9:9::1");
      expect(gate.enter("2001:db8:9:9::2")).to.be.a("function");
      expect(gate.enter("2001:db8:9:9::3")).to.equal("address-cap");
      if (typeof first !== "function") throw new Error("not entered");
      first();
      first(); // once only
      expect(gate.pending).to.equal(1);
      expect(gate.enter("2001:db8:9:9::3")).to.be.a("function");
      expect(gate.enter("2001:db8:9:9::4")).to.equal("address-cap");
    });
  });

  describe("strikes", function () {
    it("refuses every address of a /64 once its addresses earned ATTESTATION_MAX_PENDING_PER_ADDRESS strikes", function () {
      const gate = new AdmissionGate({ maxPendingPerAddress: 3 });
      gate.strike("2001:db8:4:4::1");
      gate.strike("2001:db8:4:4::2");
      expect(gate.enter("2001:db8:4:4::99")).to.be.a("function");
      gate.strike("2001:0db8:0004:0004:0000:0000:0000:0003");
      expect(gate.enter("2001:db8:4:4::99")).to.equal("refused-recently");
      expect(gate.enter("2001:db8:4:4:ffff::1")).to.equal("refused-recently");
      expect(gate.enter("2001:db8:4:5::1")).to.be.a("function");
    });

    it("strikes an IPv4-mapped address as its IPv4 address, and only that address", function () {
      const gate = new AdmissionGate({ maxPendingPerAddress: 2 });
      gate.strike("::ffff:198.51.100.7");
      gate.strike("198.51.100.7");
      expect(gate.enter("198.51.100.7")).to.equal("refused-recently");
      expect(gate.enter("198.51.100.8")).to.be.a("function");
    });
  });

  describe("source address", function () {
    it("is the socket's address, an IPv4-mapped one read as IPv4", function () {
      const gate = new AdmissionGate();
      expect(gate.sourceAddress(requestFrom("::ffff:192.0.2.1"))).to.equal("192.0.2.1");
      expect(gate.sourceAddress(requestFrom("2001:db8::1"))).to.equal("2001:db8::1");
      expect(gate.sourceAddress(requestFrom("192.0.2.1", { "x-forwarded-for": "203.0.113.1" }))).to.equal("192.0.2.1");
    });

    it("is the X-Forwarded-For entry a trusted proxy vouches for, keyed like the socket's", function () {
      const gate = new AdmissionGate({ trustedProxies: ["loopback"], maxPendingPerAddress: 1 });
      const viaProxy = (client: string) => gate.sourceAddress(requestFrom("::1", { "x-forwarded-for": client }));
      expect(viaProxy("203.0.113.1")).to.equal("203.0.113.1");
      expect(gate.enter(viaProxy("::FFFF:203.0.113.1"))).to.be.a("function");
      expect(gate.enter(viaProxy("203.0.113.1"))).to.equal("address-cap");
      expect(gate.enter(viaProxy("2001:db8:77::1"))).to.be.a("function");
      expect(gate.enter(viaProxy("2001:db8:77:0:abcd::1"))).to.equal("address-cap");
    });
  });
});
