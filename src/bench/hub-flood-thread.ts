// The flood of `npm run bench:hub-flood`, run in a worker thread (src/bench/hub-flood.ts starts it with
// `workerData`: FloodInput) and answering with one message (FloodCounts) once every socket and hello has
// ended: the hellos first, ten at a time, as a scripted attacker on one machine would (the second half
// repeat the first half's keys), then the sockets, opened at once and held until the end.
import { parentPort, workerData } from "node:worker_threads";

import { Wallet, type HDNodeWallet } from "ethers";
import WebSocket from "ws";

import { challengeText, type HubMessage } from "../common/hub-protocol.ts";

export interface FloodInput {
  hubUrl: string;
  sockets: number;
  hellos: number;
}

export interface FloodCounts {
  /** How the unauthenticated sockets ended: `open` (got a challenge, held), `http <status>`, `error`. */
  sockets: Record<string, number>;
  /** How the hellos ended: `close <code>`, or `http <status>` when refused before the challenge. */
  hellos: Record<string, number>;
  /** Hellos that reached the hub's checks (got a challenge and were answered). */
  hellosAnswered: number;
}

/** Opens a WebSocket to the hub and holds it without answering; resolves once it is open or refused. */
function openAndHold(url: string, held: WebSocket[]): Promise<string> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url);
    socket.once("open", () => {
      held.push(socket);
      resolve("open");
    });
    socket.once("unexpected-response", (_request, response) => {
      resolve(`http ${response.statusCode}`);
      response.resume();
      socket.terminate();
    });
    socket.once("error", () => resolve("error"));
  });
}

/** A login signed by `wallet` (no license: it names license 1, which it does not operate): how it ended. */
function bogusHello(url: string, wallet: HDNodeWallet): Promise<{ outcome: string; answered: boolean }> {
  return new Promise((resolve) => {
    let answered = false;
    const socket = new WebSocket(url);
    socket.on("message", (data) => {
      const message = JSON.parse((data as Buffer).toString("utf8")) as HubMessage;
      if (message.type !== "challenge") return;
      void wallet.signMessage(challengeText(message.hub, message.chainId, url, message.nonce)).then((signature) => {
        answered = true;
        socket.send(JSON.stringify({ type: "hello", burner: wallet.address, url, licenseIds: ["1"], signature }));
      });
    });
    socket.once("unexpected-response", (_request, response) => {
      resolve({ outcome: `http ${response.statusCode}`, answered });
      response.resume();
      socket.terminate();
    });
    socket.once("close", (code) => resolve({ outcome: `close ${code}`, answered }));
    socket.once("error", () => resolve({ outcome: "error", answered }));
  });
}

async function flood({ hubUrl, sockets: socketCount, hellos: helloCount }: FloodInput): Promise<FloodCounts> {
  const counts: FloodCounts = { sockets: {}, hellos: {}, hellosAnswered: 0 };
  const keys = Array.from({ length: Math.ceil(helloCount / 2) }, () => Wallet.createRandom());
  const senders = Array.from({ length: helloCount }, (_, index) => keys[index % keys.length]);
  for (let start = 0; start < senders.length; start += 10) {
    await Promise.all(
      senders.slice(start, start + 10).map(async (wallet) => {
        const { outcome, answered } = await bogusHello(hubUrl, wallet);
        counts.hellos[outcome] = (counts.hellos[outcome] ?? 0) + 1;
        if (answered) counts.hellosAnswered += 1;
      }),
    );
  }
  const held: WebSocket[] = [];
  await Promise.all(
    Array.from({ length: socketCount }, async () => {
      const outcome = await openAndHold(hubUrl, held);
      counts.sockets[outcome] = (counts.sockets[outcome] ?? 0) + 1;
    }),
  );
  for (const socket of held) socket.terminate();
  return counts;
}

if (parentPort !== null) parentPort.postMessage(await flood(workerData as FloodInput));
