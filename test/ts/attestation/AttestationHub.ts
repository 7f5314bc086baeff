import type { AttestationJson } from "@avn/protocol/attestation-kinds";
import { expect } from "chai";

import { verifyTypedData, Wallet } from "ethers";

import { challengeText, type RoundDone } from "../../../src/common/hub-protocol.ts";

import { attestationDomain, attestationFromJson, signAttestation } from "../../../src/common/attestation.ts";

import { balanceKind } from "@avn/protocol/attestation-kinds";

import { LICENSED_BALANCE_ATTESTATION_TYPES } from "@avn/protocol/attestation";
import { startSourceFixtures, type SourceFixtures } from "../../../src/devnet/source-chains.ts";

import type { AttestationSigner } from "../../../src/node/attestation-signer.ts";

import {
  connectNode,
  honestSigner,
  L2_CHAIN_ID,
  startAttestationL2,
  startHubApi,
  until,
  type AttestationL2,
  type LicensedNode,
} from "./fixture.ts";

type Answer = { status: number; data: { asset: { balance: number; QueryResult: string }; attestation: AttestationJson } };
// What a client verifies each signature with: the message and that signature's own license ids.
const types = Object.fromEntries(
  Object.entries(LICENSED_BALANCE_ATTESTATION_TYPES).map(([name, fields]) => [name, fields.map((field) => ({ ...field }))]),
);

describe("attestation hub: nodes connect out, a quorum of live licenses signs (issue 13)", function () {
  this.timeout(120_000);
  let sources: SourceFixtures;
  let l2: AttestationL2;
  let hubApi: Awaited<ReturnType<typeof startHubApi>>;
  const disconnects: Array<() => Promise<void>> = [];

  before(async function () {
    sources = await startSourceFixtures();
    l2 = await startAttestationL2();
    hubApi = await startHubApi(sources, l2, l2.verifier);
  });
  afterEach(async function () {
    for (const disconnect of disconnects.splice(0)) await disconnect();
    await until("every node gone", () => hubApi.hub.stats.list().every((node) => !node.connected));
  });
  after(async function () {
    await hubApi?.api.close();
    await l2?.stop();
    await sources?.stop();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${hubApi.api.baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: hubApi.api.apiKey, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const evmQuery = () => ({ user_address: sources.evm.holder, contract_address: sources.evm.erc20 });
  const svmQuery = () => ({ owner_address: sources.svm.owner, token_mint_address: sources.svm.splMint });
  const statsOf = (node: LicensedNode) => hubApi.hub.stats.get(node.burner.address)!;
  const join = async (entries: Array<[LicensedNode, Pick<AttestationSigner, "answer">?]>) => {
    for (const [node, signer] of entries)
      disconnects.push(connectNode(hubApi.hubUrl, node, signer ?? honestSigner(sources, node, l2.verifier)));
    await until(
      `${entries.length} node(s) admitted`,
      () => hubApi.hub.stats.list().filter((node) => node.connected).length === entries.length,
    );
  };
  type SignedReply = Extract<Awaited<ReturnType<AttestationSigner["answer"]>>, { type: "attestation" }>;
  /** A node that answers as an honest one, then changes its signed answer with `change` before sending it. */
  const tampering = (
    node: LicensedNode,
    change: (reply: SignedReply) => SignedReply | Promise<SignedReply>,
  ): Pick<AttestationSigner, "answer"> => {
    const honest = honestSigner(sources, node, l2.verifier);
    return {
      async answer(request) {
        const reply = await honest.answer(request);
        return reply.type === "attestation" ? change(reply) : reply;
      },
    };
  };
  /** A node that signs, with its real key, a balance one above what it read. */
  const malicious = (node: LicensedNode) =>
    tampering(node, async (reply) => {
      const { attestation } = attestationFromJson(balanceKind, {
        domain: { name: "", version: "", chainId: 0, verifyingContract: l2.verifier },
        message: reply.message,
        signatures: [],
      });
      const forged = { ...attestation, balance: attestation.balance + 1n };
      return {
        ...reply,
        message: { ...reply.message, balance: forged.balance.toString() },
        signature: await signAttestation(
          balanceKind,
          node.burner,
          attestationDomain(L2_CHAIN_ID, l2.verifier),
          forged,
          reply.licenseIds.map(BigInt),
        ),
      };
    });
  const silent: Pick<AttestationSigner, "answer"> = { answer: () => new Promise(() => undefined) };
  /** A raw WebSocket login: `answer` builds the hello from the challenge; resolves with how the hub closed it. */
  const rawLogin = (
    answer: (challenge: { hub: string; chainId: string; nonce: string }) => Promise<unknown>,
    onWelcome?: (ws: WebSocket) => void,
  ) =>
    new Promise<{ code: number; reason: string }>((resolve) => {
      const ws = new WebSocket(hubApi.hubUrl);
      ws.addEventListener("message", (event) => {
        const message = JSON.parse(String(event.data)) as { type: string; hub: string; chainId: string; nonce: string };
        if (message.type === "challenge") void answer(message).then((hello) => ws.send(JSON.stringify(hello)));
        if (message.type === "welcome") onWelcome?.(ws);
      });
      ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason }));
    });
  /** A hello for the URL the raw login dialled, naming the license of `node` (or license 1 for a stranger's key). */
  const helloOf = async (
    wallet: Wallet,
    challenge: { hub: string; chainId: string; nonce: string },
    licenseIds = [String(l2.nodes.find((node) => node.burner.address === wallet.address)?.licenseId ?? 1n)],
  ) => ({
    type: "hello",
    burner: wallet.address,
    url: hubApi.hubUrl,
    licenseIds,
    signature: await wallet.signMessage(challengeText(challenge.hub, challenge.chainId, hubApi.hubUrl, challenge.nonce)),
  });
  const expectValidOnChain = async (json: AttestationJson, valid = true) => {
    const { attestation, signatures } = attestationFromJson(balanceKind, json);
    expect(await l2.contracts.attestationVerifier.isAttestationValid(attestation, signatures, 3_600n)).to.equal(valid);
  };

  it("refuses the login of a burner that operates no license (4403)", async function () {
    const outsider = new Wallet(Wallet.createRandom().privateKey);
    const closed = await rawLogin((challenge) => helloOf(outsider, challenge));
    expect(closed.code).to.equal(4403);
    expect(hubApi.hub.stats.get(outsider.address)).to.equal(undefined);
  });

  it("refuses a forged challenge answer (4401): another key, another hub's or chain's challenge, or a replayed answer", async function () {
    const [nodeA] = l2.nodes;
    const forger = new Wallet(Wallet.createRandom().privateKey);
    const forged = await rawLogin(async (challenge) => ({ ...(await helloOf(forger, challenge)), burner: nodeA.burner.address }));
    expect(forged.code).to.equal(4401);
    const otherHub = await rawLogin((challenge) => helloOf(nodeA.burner, { ...challenge, hub: "another-hub" }));
    expect(otherHub.code).to.equal(4401);
    const otherChain = await rawLogin((challenge) => helloOf(nodeA.burner, { ...challenge, chainId: "1" }));
    expect(otherChain.code).to.equal(4401);
    // A genuine answer, recorded, is worth nothing on the next connection (a fresh nonce).
    let recorded: unknown;
    const genuine = await rawLogin(
      async (challenge) => (recorded = await helloOf(nodeA.burner, challenge)),
      (ws) => ws.close(1000),
    );
    expect(genuine.code).to.equal(1000);
    const replayed = await rawLogin(async () => recorded);
    expect(replayed.code).to.equal(4401);
  });

  it("answers ?attest=true on both chains with a struct signed by a quorum of live licenses, matching the body and valid on-chain", async function () {
    await join(l2.nodes.slice(0, 3).map((node) => [node]));
    for (const [path, body] of [
      ["/api/ccq-evm", evmQuery()],
      ["/api/ccq-svm", svmQuery()],
    ] as const) {
      const plainText = await (await post(path, body)).text();
      const plain = JSON.parse(plainText) as Answer;
      const response = await post(`${path}?attest=true`, body);
      expect(response.status).to.equal(200);
      const text = await response.text();
      const answer = JSON.parse(text) as Answer;
      // The body is the unattested answer with data.attestation added (balances compared exactly, not as floats).
      const exactBalance = (raw: string) => /"balance":(\d+)/.exec(raw)![1];
      expect(exactBalance(text)).to.equal(exactBalance(plainText));
      expect(answer.data.asset.QueryResult).to.equal(plain.data.asset.QueryResult);
      const { domain, message, signatures } = answer.data.attestation;
      expect(domain).to.deep.equal({
        name: "Asset Verification Network",
        version: "1",
        chainId: Number(L2_CHAIN_ID),
        verifyingContract: l2.verifier,
      });
      expect(message.balance).to.equal(exactBalance(plainText));
      expect(message.chain).to.equal(path === "/api/ccq-evm" ? "0" : "1");
      const licenses = signatures.flatMap((signature) => signature.licenseIds);
      expect(new Set(licenses).size).to.be.at.least(2);
      for (const signature of signatures) {
        const signed = { attestation: message, licenseIds: signature.licenseIds };
        expect(verifyTypedData(domain, types, signed, signature.signature)).to.equal(signature.signer);
      }
      await expectValidOnChain(answer.data.attestation);
      // The same struct with any other balance is refused by the contract.
      await expectValidOnChain(
        { ...answer.data.attestation, message: { ...message, balance: (BigInt(message.balance) + 1n).toString() } },
        false,
      );
    }
    const listed = (await (await fetch(`${hubApi.api.baseUrl}/attest/nodes`)).json()) as {
      nodes: Array<{ burner: string; connected: boolean; asked: number }>;
    };
    expect(listed.nodes.filter((node) => node.connected).map((node) => node.burner)).to.have.members(
      l2.nodes.slice(0, 3).map((node) => node.burner.address),
    );
  });

  it("the answer travels once: the API serves a signer's QueryResult bytes and reads no source; it reads only when no bytes came, and bytes that differ from the signed hash make the answer invalid", async function () {
    const [nodeA, nodeB, nodeC] = l2.nodes;
    // Every read the API makes through its pinned readers, counted.
    const original = hubApi.service.pinned;
    let reads = 0;
    const counting = {
      evmAt: (block: bigint) => {
        const reader = original.evmAt(block);
        return { balanceOf: (...args: Parameters<typeof reader.balanceOf>) => (reads++, reader.balanceOf(...args)) };
      },
      solanaFrom: (slot: bigint) => {
        const reader = original.solanaFrom(slot);
        return { balanceOf: (...args: Parameters<typeof reader.balanceOf>) => (reads++, reader.balanceOf(...args)) };
      },
    };
    hubApi.service.pinned = counting as unknown as typeof original;
    /** A node whose signed answer comes without its bytes (as when they would not fit a frame). */
    const withoutBytes = (node: LicensedNode) => tampering(node, ({ evidence: _dropped, ...signed }) => signed);
    /** A node that signs what it read but sends other bytes beside it. */
    const otherBytes = (node: LicensedNode) =>
      tampering(node, (reply) => {
        const bytes = reply.evidence!.queryResult;
        return { ...reply, evidence: { queryResult: `${bytes.slice(0, -2)}${bytes.endsWith("00") ? "01" : "00"}` } };
      });
    const leave = async () => {
      for (const disconnect of disconnects.splice(0)) await disconnect();
      await until("nodes gone", () => hubApi.hub.stats.list().every((node) => !node.connected));
    };
    try {
      const plain = new Map<string, string>();
      for (const [path, body] of [
        ["/api/ccq-evm", evmQuery()],
        ["/api/ccq-svm", svmQuery()],
      ] as const)
        plain.set(path, ((await (await post(path, body)).json()) as Answer).data.asset.QueryResult);
      const attested = async (path: "/api/ccq-evm" | "/api/ccq-svm") => {
        const response = await post(`${path}?attest=true`, path === "/api/ccq-evm" ? evmQuery() : svmQuery());
        expect(response.status, path).to.equal(200);
        const answer = (await response.json()) as Answer;
        expect(answer.data.asset.QueryResult, path).to.equal(plain.get(path));
        return answer;
      };

      await join([[nodeA], [nodeB], [nodeC]]);
      reads = 0;
      for (const path of plain.keys()) await attested(path as "/api/ccq-evm");
      expect(reads, "reads by the API with the bytes in the frames").to.equal(0);
      await leave();

      await join([
        [nodeA, withoutBytes(nodeA)],
        [nodeB, withoutBytes(nodeB)],
        [nodeC, withoutBytes(nodeC)],
      ]);
      for (const path of plain.keys()) await attested(path as "/api/ccq-evm");
      expect(reads, "one read per answer when no signer sent bytes").to.equal(2);
      await leave();

      const invalidBefore = statsOf(nodeC)?.answers.invalid ?? 0;
      await join([[nodeA], [nodeB], [nodeC, otherBytes(nodeC)]]);
      reads = 0;
      const { attestation } = (await attested("/api/ccq-evm")).data;
      expect(attestation.signatures.map((signature) => signature.signer)).to.not.include(nodeC.burner.address);
      await until("the node with other bytes counted invalid", () => statsOf(nodeC).answers.invalid === invalidBefore + 1);
      expect(reads).to.equal(0);
    } finally {
      hubApi.service.pinned = original;
    }
  });

  it("does not let one node that signs a wrong balance reach quorum alone, and counts it as disagreeing", async function () {
    const [nodeA, nodeB, nodeC] = l2.nodes;
    const before = statsOf(nodeC)?.answers.disagreed ?? 0;
    await join([[nodeA], [nodeB], [nodeC, malicious(nodeC)]]);
    const response = await post("/api/ccq-evm?attest=true", evmQuery());
    expect(response.status).to.equal(200);
    const { attestation } = ((await response.json()) as Answer).data;
    expect(attestation.signatures.map((signature) => signature.signer)).to.not.include(nodeC.burner.address);
    await until("the wrong signer counted", () => statsOf(nodeC).answers.disagreed === before + 1);
    expect(await hubApi.metrics.registry.getSingleMetricAsString("api_attestation_answers_total")).to.match(/outcome="disagreed"} [1-9]/);

    // Alone with one honest node (quorum 2), its struct never gathers a quorum: 503, not a 200.
    for (const disconnect of disconnects.splice(0)) await disconnect();
    await until("nodes gone", () => hubApi.hub.stats.list().every((node) => !node.connected));
    await join([[nodeA], [nodeC, malicious(nodeC)]]);
    const refused = await post("/api/ccq-evm?attest=true", evmQuery());
    expect(refused.status).to.equal(503);
    expect(refused.headers.get("retry-after")).to.equal("1");
  });

  it("passes each node's license list on exactly as it signed it, and counts none of a list naming a license not its own", async function () {
    const [nodeA, nodeB, nodeC] = l2.nodes;
    // Node C also signs for node B's license: its whole signature is left out (a signed list cannot be
    // trimmed), so with node A alone beside it there is no quorum.
    const greedy = honestSigner(sources, nodeC, l2.verifier, () => [nodeC.licenseId, nodeB.licenseId]);
    const before = statsOf(nodeC)?.answers.unlicensed ?? 0;
    await join([[nodeA], [nodeC, greedy]]);
    expect((await post("/api/ccq-evm?attest=true", evmQuery())).status).to.equal(503);
    await until("the greedy signer counted", () => statsOf(nodeC).answers.unlicensed === before + 1);

    for (const disconnect of disconnects.splice(0)) await disconnect();
    await until("nodes gone", () => hubApi.hub.stats.list().every((node) => !node.connected));
    await join([[nodeA], [nodeB]]);
    const response = await post("/api/ccq-evm?attest=true", evmQuery());
    expect(response.status).to.equal(200);
    const json = ((await response.json()) as Answer).data.attestation;
    expect(json.signatures.map((signature) => [signature.signer, signature.licenseIds])).to.have.deep.members(
      [nodeA, nodeB].map((node) => [node.burner.address, [node.licenseId.toString()]]),
    );
    await expectValidOnChain(json);
    // Whoever carries the answer cannot give node C's license to node A: the verifier refuses the list.
    const padded = {
      ...json,
      signatures: json.signatures.map((signature) =>
        signature.signer === nodeA.burner.address
          ? { ...signature, licenseIds: [...signature.licenseIds, nodeC.licenseId.toString()] }
          : signature,
      ),
    };
    await expectValidOnChain(padded, false);
  });

  it("a silent node costs only its share: the other two reach quorum at once, it is counted silent", async function () {
    const [nodeA, nodeB, nodeC] = l2.nodes;
    await join([[nodeA], [nodeB], [nodeC, silent]]);
    // Earlier tests' rounds last until their deadlines, and one may count node C silent: counted from after them.
    await until("earlier rounds over", () => hubApi.hub.openRounds === 0, hubApi.hub.deadlineMs + 2_000);
    const silentBefore = statsOf(nodeC).answers.silent;
    const started = performance.now();
    const response = await post("/api/ccq-svm?attest=true", svmQuery());
    expect(response.status).to.equal(200);
    expect(performance.now() - started).to.be.below(hubApi.hub.deadlineMs);
    const signers = ((await response.json()) as Answer).data.attestation.signatures.map((signature) => signature.signer);
    expect(signers).to.have.members([nodeA.burner.address, nodeB.burner.address]);
    // This round over (at its deadline, not before: left open, it would end, and send its result, in the next test).
    await until("the round over at its deadline", () => hubApi.hub.openRounds === 0, hubApi.hub.deadlineMs + 2_000);
    expect(performance.now() - started).to.be.at.least(hubApi.hub.deadlineMs - 50);
    expect(statsOf(nodeC).answers.silent).to.equal(silentBefore + 1);
  });

  it("sends each signer of the winning struct the round's result: every signature of it, fastest first, none to the wrong signer", async function () {
    const [nodeA, nodeB, nodeC, nodeD] = l2.nodes;
    const results = new Map<string, RoundDone[]>();
    const signedIds = new Map<string, string[]>();
    const listen = (node: LicensedNode, signer?: Pick<AttestationSigner, "answer">, onResult?: () => void) => {
      const burner = node.burner.address;
      results.set(burner, []);
      signedIds.set(burner, []);
      disconnects.push(
        connectNode(hubApi.hubUrl, node, signer ?? honestSigner(sources, node, l2.verifier), {
          onSigned: (id) => signedIds.get(burner)!.push(id),
          onRoundDone: (done) => {
            // Only rounds this connection signed: an earlier round (another test's, or part one's) that ends at its
            // deadline sends its result to the burner's session of the moment, which may be this one.
            if (!signedIds.get(burner)!.includes(done.id)) return;
            onResult?.();
            results.get(burner)!.push(done);
          },
        }),
      );
    };
    const resultsOf = (node: LicensedNode) => results.get(node.burner.address)!;
    // Three honest nodes and one that signs a wrong balance, every one answering at once.
    for (const node of [nodeA, nodeB, nodeC]) listen(node);
    listen(nodeD, malicious(nodeD));
    // These four, by burner: a count of connected nodes could include one of an earlier test reconnecting, and a
    // round opened before node D is admitted would not ask it.
    const admitted = () => [nodeA, nodeB, nodeC, nodeD].every((node) => statsOf(node)?.connected === true);
    await until("4 nodes admitted", admitted);
    const started = performance.now();
    const response = await post("/api/ccq-evm?attest=true", evmQuery());
    expect(response.status).to.equal(200);
    const { domain, message } = ((await response.json()) as Answer).data.attestation;
    await until("each honest node's result", () => [nodeA, nodeB, nodeC].every((node) => resultsOf(node).length === 1));
    // Every node answered: the result goes then, not at the deadline.
    expect(performance.now() - started).to.be.below(hubApi.hub.deadlineMs);
    const [done] = resultsOf(nodeA);
    for (const node of [nodeB, nodeC]) expect(resultsOf(node)).to.deep.equal([done]);
    expect(signedIds.get(nodeA.burner.address)).to.include(done.id);
    // Each entry recovers, over the struct the client got, to an honest signer with its own license ids.
    const signers = done.signatures.map((entry) => {
      const signer = verifyTypedData(domain, types, { attestation: message, licenseIds: entry.licenseIds }, entry.signature);
      const node = l2.nodes.find((candidate) => candidate.burner.address === signer)!;
      expect(entry.licenseIds).to.deep.equal(node.licenseIds.map(String));
      expect(entry.elapsedMs).to.be.within(0, hubApi.hub.deadlineMs);
      return signer;
    });
    expect(signers).to.have.members([nodeA, nodeB, nodeC].map((node) => node.burner.address));
    const times = done.signatures.map((entry) => entry.elapsedMs);
    expect(times).to.deep.equal([...times].sort((a, b) => a - b));
    expect(resultsOf(nodeD), "the wrong signer gets no result").to.deep.equal([]);

    // A silent fourth: the round's result waits for the deadline, after which the silent node is counted.
    for (const disconnect of disconnects.splice(0)) await disconnect();
    await until("nodes gone", () => hubApi.hub.stats.list().every((node) => !node.connected));
    const silentBefore = statsOf(nodeD)?.answers.silent ?? 0;
    let silentWhenDone: number | undefined;
    listen(nodeA, undefined, () => (silentWhenDone = statsOf(nodeD).answers.silent));
    for (const node of [nodeB, nodeC]) listen(node);
    listen(nodeD, silent);
    await until("4 nodes admitted", admitted);
    expect((await post("/api/ccq-evm?attest=true", evmQuery())).status).to.equal(200);
    await until("the result after the deadline", () => resultsOf(nodeA).length === 1, hubApi.hub.deadlineMs + 5_000);
    // The hub counts the silent node at the deadline, then sends the result: the node sees the count already.
    expect(silentWhenDone).to.equal(silentBefore + 1);
    expect(resultsOf(nodeA)[0].signatures).to.have.length(3);
  });

  it("sends no round result when the results budget is 0", async function () {
    const quiet = await startHubApi(sources, l2, l2.verifier, { resultsPerSecond: 0 });
    const received: RoundDone[] = [];
    const stops = l2.nodes
      .slice(0, 2)
      .map((node) =>
        connectNode(quiet.hubUrl, node, honestSigner(sources, node, l2.verifier), { onRoundDone: (done) => received.push(done) }),
      );
    try {
      await until("2 nodes admitted", () => quiet.hub.stats.list().filter((node) => node.connected).length === 2);
      const response = await fetch(`${quiet.api.baseUrl}/api/ccq-evm?attest=true`, {
        method: "POST",
        headers: { authorization: quiet.api.apiKey, "content-type": "application/json" },
        body: JSON.stringify(evmQuery()),
      });
      expect(response.status).to.equal(200);
      // The result would have been sent in the same step that counts it sampled out.
      const sampledOut = async () =>
        (await quiet.metrics.attestationRoundResults.get()).values.find((value) => value.labels.outcome === "sampled-out")?.value ?? 0;
      await until("the round's result skipped", async () => (await sampledOut()) === 1);
      expect(received).to.deep.equal([]);
    } finally {
      for (const stop of stops) await stop();
      await quiet.api.close();
    }
  });

  it("answers 503 when no quorum can be gathered: Retry-After and the envelope, at once (nothing read) or at the deadline", async function () {
    const [nodeA, , nodeC] = l2.nodes;
    await join([[nodeA]]);
    const tooFew = await post("/api/ccq-evm?attest=true", evmQuery());
    expect(tooFew.status).to.equal(503);
    expect(tooFew.headers.get("retry-after")).to.equal("1");
    expect(await tooFew.json()).to.deep.equal({
      status: 503,
      message: "Attestation unavailable: 1 live license(s) connected, quorum is 2",
    });
    // Refused before the asset is read: one that is not there (an account without code) gets the same 503,
    // not the 404 a read gives after a round that ended without a quorum.
    const unread = await post("/api/ccq-evm?attest=true", { ...evmQuery(), contract_address: sources.evm.holder });
    expect(unread.status).to.equal(503);
    expect(((await unread.json()) as { message: string }).message).to.equal(
      "Attestation unavailable: 1 live license(s) connected, quorum is 2",
    );

    disconnects.push(connectNode(hubApi.hubUrl, nodeC, silent));
    await until("two admitted", () => hubApi.hub.stats.list().filter((node) => node.connected).length === 2);
    const started = performance.now();
    const late = await post("/api/ccq-svm?attest=true", svmQuery());
    expect(late.status).to.equal(503);
    expect(performance.now() - started).to.be.at.least(hubApi.hub.deadlineMs - 50);
    expect(await late.json()).to.deep.equal({
      status: 503,
      message: `Attestation quorum not reached within ${hubApi.hub.deadlineMs} ms: the most licenses agreeing on one answer was 1 of quorum 2`,
    });
  });

  it("the node's client logs in again with backoff when the hub closes its connection", async function () {
    const [nodeA] = l2.nodes;
    await join([[nodeA]]);
    const first = statsOf(nodeA).connectedSince;
    // A second login of the same burner replaces the node's connection (closed by the hub)…
    let replacedBy: WebSocket | undefined;
    const raw = rawLogin(
      (challenge) => helloOf(nodeA.burner, challenge),
      (ws) => (replacedBy = ws),
    );
    await until("the raw login admitted", () => replacedBy !== undefined);
    // …and the client, seeing its socket closed, logs in again and takes it back.
    expect((await raw).code).to.equal(4409);
    await until("the client back", () => statsOf(nodeA).connected && statsOf(nodeA).connectedSince !== first);
    const response = await post("/api/ccq-evm?attest=true", evmQuery());
    expect(response.status).to.equal(503); // one license connected, quorum 2: refused at once
  });

  it("drops a node whose license is transferred mid-session (4410) and no longer counts it", async function () {
    const nodeD = l2.nodes[3];
    let admitted = false;
    const closed = rawLogin(
      (challenge) => helloOf(nodeD.burner, challenge),
      () => (admitted = true),
    );
    await until("node D admitted", () => admitted);
    expect(statsOf(nodeD).connected).to.equal(true);
    const [, treasury] = await l2.ethers.getSigners();
    await (await l2.contracts.license.connect(nodeD.owner).transferFrom(nodeD.owner.address, treasury.address, nodeD.licenseId)).wait();
    await hubApi.hub.recheck();
    expect((await closed).code).to.equal(4410);
    expect(statsOf(nodeD).connected).to.equal(false);
    // Logging in again is now refused outright.
    expect((await rawLogin((challenge) => helloOf(nodeD.burner, challenge))).code).to.equal(4403);
  });
});
