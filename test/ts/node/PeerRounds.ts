import { expect } from "chai";
import { Wallet } from "ethers";
import { pino } from "pino";

import type { BalanceAttestation } from "@avn/protocol/attestation";
import type { ConditionAttestation } from "@avn/protocol/conditions";

import { roundDoneFrame } from "../../../src/api/attestation-hub/rounds.ts";
import { attestationDomain, signAttestation } from "../../../src/common/attestation.ts";
import { balanceKind, conditionKind } from "@avn/protocol/attestation-kinds";
import {
  MAX_DONE_SIGNATURES,
  MAX_FRAME_BYTES,
  MAX_ROUND_DEADLINE_MS,
  roundDoneSchema,
  type RoundDone,
} from "../../../src/common/hub-protocol.ts";
import { ownSignedAnswer } from "../../../src/common/signed-answer.ts";
import { PeerRounds, RECOVERIES_PER_SECOND, RESULT_WAIT_MS } from "../../../src/node/monitor/peer-rounds.ts";

const domain = attestationDomain(900n, "0x5FbDB2315678afecb367f032d93F642f64180aa3");
const MAX_UINT256 = (2n ** 256n - 1n).toString();
const balance = (issuedAt: bigint, amount = 5n): BalanceAttestation => ({
  chain: 0,
  owner: `0x${"00".repeat(12)}${"11".repeat(20)}`,
  asset: `0x${"00".repeat(12)}${"22".repeat(20)}`,
  balance: amount,
  queryResultHash: `0x${"33".repeat(32)}`,
  sourceBlock: 10n,
  issuedAt,
});

/** A node: a key and the licenses it operates (the registry the tally reads is these). */
const node = (licenseIds: bigint[]) => ({ wallet: Wallet.createRandom(), licenseIds });

describe("peer observations through the hub's rounds: the round result frame and the node's tally", function () {
  describe("the roundDone frame", function () {
    const entry = { licenseIds: ["2"], signature: `0x${"1b".repeat(65)}`, elapsedMs: 40 };
    const frame: RoundDone = { type: "roundDone", truncated: false, id: "r1", signatures: [entry] };

    it("accepts what the hub builds; refuses too many licenses or entries, times outside a round, and unknown keys", function () {
      expect(roundDoneSchema.safeParse(frame).success).to.equal(true);
      for (const bad of [
        { ...frame, signatures: [{ ...entry, licenseIds: Array.from({ length: 17 }, (_, index) => String(index + 1)) }] },
        { ...frame, signatures: [{ ...entry, elapsedMs: MAX_ROUND_DEADLINE_MS + 1 }] },
        { ...frame, signatures: [{ ...entry, elapsedMs: -1 }] },
        { ...frame, signatures: [{ ...entry, elapsedMs: 1.5 }] },
        { ...frame, signatures: Array.from({ length: MAX_DONE_SIGNATURES + 1 }, () => entry) },
        { ...frame, signatures: [] },
        { ...frame, signatures: [{ ...entry, signer: "0x00" }] },
        { ...frame, struct: {} },
        { ...frame, signatures: [{ ...entry, signature: "0x1b" }] },
      ])
        expect(roundDoneSchema.safeParse(bad).success, JSON.stringify(bad).slice(0, 80)).to.equal(false);
    });

    it("lists the fastest signatures first, as many as fit the frame cap, and names only the listed signers as recipients", function () {
      const signer = (index: number) => `0x${index.toString(16).padStart(40, "0")}`;
      // The longest entries there can be: 16 licenses of 78 digits each. Fewer than 40 fit one frame.
      const longest = Array.from({ length: 45 }, (_, index) => ({
        signature: {
          signer: signer(index),
          licenseIds: Array.from({ length: 16 }, () => BigInt(MAX_UINT256)),
          signature: `0x${"1b".repeat(65)}`,
        },
        elapsedMs: 1_000 - index,
      }));
      const { done, recipients } = roundDoneFrame("r1", longest);
      expect(Buffer.byteLength(JSON.stringify(done))).to.be.at.most(MAX_FRAME_BYTES);
      expect(done.signatures.length).to.be.within(1, MAX_DONE_SIGNATURES - 1);
      expect(roundDoneSchema.safeParse(done).success).to.equal(true);
      const times = done.signatures.map((listed) => listed.elapsedMs);
      expect(times).to.deep.equal([...times].sort((a, b) => a - b));
      expect(times[0]).to.equal(1_000 - 44);
      expect([...recipients]).to.deep.equal(done.signatures.map((_, index) => signer(44 - index)));
      expect(done.truncated, "signatures left out").to.equal(true);
      // Short entries: the count cap.
      const short = longest.map((listed) => ({ ...listed, signature: { ...listed.signature, licenseIds: [1n] } }));
      expect(roundDoneFrame("r1", short).done.signatures).to.have.length(MAX_DONE_SIGNATURES);
      expect(roundDoneFrame("r1", short).done.truncated).to.equal(true);
      expect(roundDoneFrame("r1", short.slice(0, 3)).done.truncated).to.equal(false);
      // An answer judged just past a 60-s deadline is listed at the longest time a node accepts.
      const lagging = roundDoneFrame("r1", [{ ...short[0], elapsedMs: MAX_ROUND_DEADLINE_MS + 7 }]).done;
      expect(lagging.signatures[0].elapsedMs).to.equal(MAX_ROUND_DEADLINE_MS);
      expect(roundDoneSchema.safeParse(lagging).success).to.equal(true);
    });
  });

  describe("the node's tally", function () {
    const self = node([1n]);
    const peerB = node([2n]);
    const peerC = node([3n, 4n]);
    const stranger = node([9n]); // signs, but operates no license: an invented signer
    const operators = new Map([self, peerB, peerC].map((entry) => [entry.wallet.address, entry.licenseIds.join(",")]));
    let now = 1_000_000;
    const reads: string[] = [];
    const tally = () =>
      new PeerRounds({
        self: self.wallet.address,
        licenses: () => self.licenseIds,
        epochOf: async (issuedAt) => Number(issuedAt / 100n),
        isLiveOperatorOf: async (signer, licenseIds) => {
          reads.push(`${signer}:${licenseIds.join(",")}`);
          return operators.get(signer) === licenseIds.join(",");
        },
        logger: pino({ level: "silent" }),
        now: () => now,
      });
    const sign = async (who: ReturnType<typeof node>, struct: BalanceAttestation, licenseIds = who.licenseIds) => ({
      licenseIds: licenseIds.map(String),
      signature: await signAttestation(balanceKind, who.wallet, domain, struct, licenseIds),
    });
    /** The node signs `struct` in round `id`: what the hub client tells the tally. */
    const signed = async (peers: PeerRounds, id: string, struct: BalanceAttestation) => {
      const own = await sign(self, struct);
      peers.signed(id, ownSignedAnswer(domain, { type: "attestation", message: balanceKind.toMessage(struct), ...own }));
      return own;
    };
    const entry = (signature: { licenseIds: string[]; signature: string }, elapsedMs: number) => ({ ...signature, elapsedMs });
    /** Each peer's license, rounds observed and rounds signed in `epoch`. */
    const counts = (peers: PeerRounds, epoch: number) =>
      peers.figures(epoch).peers.map(({ licenseId, roundsObserved, roundsSigned }) => [licenseId, roundsObserved, roundsSigned]);
    beforeEach(() => (reads.length = 0));

    it("counts a round only with its own signature listed, and credits only signatures over its own struct by their licenses' operators", async function () {
      const peers = tally();
      const struct = balance(1_000n);
      expect(
        await peers.done({ type: "roundDone", truncated: false, id: "never-signed", signatures: [entry(await sign(peerB, struct), 5)] }),
      ).to.equal("unknown");

      // Round 1: the hub lists B, C, a stranger's key, a signature of another balance by B, and B twice.
      const own = await signed(peers, "r1", struct);
      const outcome = await peers.done({
        type: "roundDone",
        truncated: false,
        id: "r1",
        signatures: [
          entry(own, 20),
          entry(await sign(peerB, struct), 30),
          entry(await sign(peerB, struct), 31),
          entry(await sign(peerC, struct), 50),
          entry(await sign(stranger, struct, [2n]), 10), // claims B's license: recovers to the stranger
          entry(await sign(peerB, balance(1_000n, 6n)), 5), // another struct: recovers to no operator
          entry(await sign(peerC, struct, [4n, 3n]), 7), // not ascending: not what an honest node signs
        ],
      });
      expect(outcome).to.equal("counted");
      expect(peers.figures(10)).to.deep.equal({
        peerRounds: 1,
        peers: [
          { licenseId: 2n, roundsObserved: 1, roundsSigned: 1, medianSigningMs: 30 },
          { licenseId: 3n, roundsObserved: 1, roundsSigned: 1, medianSigningMs: 50 },
          { licenseId: 4n, roundsObserved: 1, roundsSigned: 1, medianSigningMs: 50 },
        ],
      });
      // A second result for the same round is not counted again.
      expect(
        await peers.done({
          type: "roundDone",
          truncated: false,
          id: "r1",
          signatures: [entry(own, 20), entry(await sign(peerB, struct), 30)],
        }),
      ).to.equal("unknown");

      // Round 2: the hub says B signed, but the node's own signature is not listed (it signed another struct).
      const other = await signed(peers, "r2", balance(1_001n));
      expect(other.signature).to.not.equal(own.signature);
      expect(
        await peers.done({
          type: "roundDone",
          truncated: false,
          id: "r2",
          signatures: [entry(own, 1), entry(await sign(peerB, balance(1_001n, 6n)), 2)],
        }),
      ).to.equal("not-winner");

      // Round 3: only B signed; C is observed, not signed. Each signer's licenses were read once (cached).
      const third = balance(1_002n);
      const ownThird = await signed(peers, "r3", third);
      expect(
        await peers.done({
          type: "roundDone",
          truncated: false,
          id: "r3",
          signatures: [entry(ownThird, 10), entry(await sign(peerB, third), 70)],
        }),
      ).to.equal("counted");
      expect(peers.figures(10).peerRounds).to.equal(2);
      expect(counts(peers, 10)).to.deep.equal([
        [2n, 2, 2],
        [3n, 2, 1],
        [4n, 2, 1],
      ]);
      expect(peers.figures(10).peers[0].medianSigningMs).to.equal(30);
      expect(reads.filter((read) => read.startsWith(peerB.wallet.address))).to.have.length(1);

      // The next epoch (issue time 1,100): a tally of its own; a license first seen now is observed from now.
      const next = balance(1_100n);
      const ownNext = await signed(peers, "r4", next);
      await peers.done({
        type: "roundDone",
        truncated: false,
        id: "r4",
        signatures: [entry(ownNext, 10), entry(await sign(peerC, next), 12)],
      });
      expect(peers.figures(11)).to.deep.equal({
        peerRounds: 1,
        peers: [
          { licenseId: 3n, roundsObserved: 1, roundsSigned: 1, medianSigningMs: 12 },
          { licenseId: 4n, roundsObserved: 1, roundsSigned: 1, medianSigningMs: 12 },
        ],
      });
      expect(peers.figures(10).peerRounds).to.equal(2);
      expect(peers.figures(12)).to.deep.equal({ peerRounds: 0, peers: [] });

      // A truncated list (more signers than fit a frame): C, left out, is not counted absent; B, listed, is seen.
      const fifth = balance(1_003n);
      const ownFifth = await signed(peers, "r5", fifth);
      const truncated = {
        type: "roundDone" as const,
        truncated: true,
        id: "r5",
        signatures: [entry(ownFifth, 10), entry(await sign(peerB, fifth), 20)],
      };
      expect(await peers.done(truncated)).to.equal("counted");
      expect(counts(peers, 10)).to.deep.equal([
        [2n, 3, 3],
        [3n, 2, 1],
        [4n, 2, 1],
      ]);
      expect(peers.figures(10).peerRounds).to.equal(3);
    });

    it("tallies condition rounds alike, forgets a signed answer after the longest round, and skips a frame over its recovery budget whole", async function () {
      const peers = tally();
      const condition: ConditionAttestation = {
        conditionHash: `0x${"44".repeat(32)}`,
        ownersHash: `0x${"55".repeat(32)}`,
        verdict: true,
        ethereumBlock: 10n,
        solanaSlot: 0n,
        issuedAt: 1_000n,
      };
      const signCondition = async (who: ReturnType<typeof node>) => ({
        licenseIds: who.licenseIds.map(String),
        signature: await signAttestation(conditionKind, who.wallet, domain, condition, who.licenseIds),
      });
      const own = await signCondition(self);
      const answer = { type: "conditionAttestation" as const, message: conditionKind.toMessage(condition), ...own };
      peers.signed("c1", ownSignedAnswer(domain, answer));
      expect(
        await peers.done({
          type: "roundDone",
          truncated: false,
          id: "c1",
          signatures: [entry(own, 3), entry(await signCondition(peerB), 4)],
        }),
      ).to.equal("counted");
      expect(peers.figures(10).peers).to.deep.equal([{ licenseId: 2n, roundsObserved: 1, roundsSigned: 1, medianSigningMs: 4 }]);

      // Signed, but the result comes after the longest round could have lasted: not counted.
      peers.signed("c2", ownSignedAnswer(domain, answer));
      now += RESULT_WAIT_MS;
      expect(await peers.done({ type: "roundDone", truncated: false, id: "c2", signatures: [entry(own, 3)] })).to.equal("unknown");

      // A hub flooding the node with signatures: past RECOVERIES_PER_SECOND in a second, a frame is skipped whole.
      const crowd = await Promise.all(Array.from({ length: MAX_DONE_SIGNATURES - 1 }, () => signCondition(node([99n]))));
      const outcomes: string[] = [];
      for (let round = 0; round * crowd.length <= RECOVERIES_PER_SECOND; round += 1) {
        peers.signed(`flood-${round}`, ownSignedAnswer(domain, answer));
        outcomes.push(
          await peers.done({
            type: "roundDone",
            truncated: false,
            id: `flood-${round}`,
            signatures: [entry(own, 1), ...crowd.map((listed) => entry(listed, 2))],
          }),
        );
      }
      expect(outcomes.at(-1)).to.equal("over-budget");
      expect(outcomes.slice(0, -1).every((outcome) => outcome === "counted")).to.equal(true);
      // None of the crowd operates a license: nothing credited, whatever was counted.
      expect(peers.figures(10).peers.map((peer) => peer.licenseId)).to.deep.equal([2n]);
    });
  });
});
