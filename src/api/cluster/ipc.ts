import cluster, { type Worker } from "node:cluster";
import { AvnError } from "@avn/protocol/errors";

/**
 * Calls from an API worker to the cluster's primary over the IPC channel Node's `cluster` opens: the
 * state every worker must share (rate-limit buckets) and every worker must see whole (metrics) lives in
 * the primary. Calls made in one turn of the event loop leave as one message, so a busy worker sends
 * a message per tick, not per request. The other way, the primary pushes messages on a topic to a worker
 * (`pushToWorker`), which a worker's `PrimaryClient.onPush` receives: the attestation hub's rounds and
 * answers between workers.
 */
interface CallMessage {
  avn: "calls";
  calls: Array<{ id: number; service: string; method: string; args: unknown[] }>;
}
interface ReplyMessage {
  avn: "replies";
  replies: Array<{ id: number; result?: unknown; error?: string }>;
}

interface PushMessage {
  avn: "push";
  topic: string;
  payload: unknown;
}

export type IpcService = Record<string, (...args: never[]) => Promise<unknown>>;

/** The primary's side: answers every worker's calls to `services` (by name). */
export function serveWorkers(services: Record<string, IpcService>): () => void {
  const onMessage = (worker: Worker, message: unknown) => {
    const batch = message as CallMessage;
    if (batch?.avn !== "calls" || !Array.isArray(batch.calls)) return;
    void Promise.all(
      batch.calls.map(async ({ id, service, method, args }) => {
        try {
          const target = services[service]?.[method];
          if (target === undefined) throw new Error(`no IPC method ${service}.${method}`);
          return { id, result: await (target as (...a: unknown[]) => Promise<unknown>).apply(services[service], args) };
        } catch (error) {
          return { id, error: (error as Error)?.message ?? String(error) };
        }
      }),
    ).then((replies) => {
      if (worker.isConnected()) worker.send({ avn: "replies", replies } satisfies ReplyMessage);
    });
  };
  cluster.on("message", onMessage);
  return () => cluster.off("message", onMessage);
}

/** The primary's side: sends `payload` on `topic` to `worker` (dropped when the worker is gone). */
export function pushToWorker(worker: Worker, topic: string, payload: unknown): void {
  if (worker.isConnected()) worker.send({ avn: "push", topic, payload } satisfies PushMessage, undefined, () => undefined);
}

/** An error the primary reported for a call. */
export class IpcCallError extends AvnError<"IPC_CALL_FAILED"> {
  override name = "IpcCallError";

  constructor(message: string) {
    super("IPC_CALL_FAILED", message);
  }
}

/** The worker's side: `call(service, method, args)` resolves with the primary's answer. */
export class PrimaryClient {
  #nextId = 0;
  readonly #waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #outgoing: CallMessage["calls"] = [];
  readonly #pushHandlers = new Map<string, (payload: unknown) => void>();
  readonly #onMessage = (message: unknown) => {
    const push = message as PushMessage;
    if (push?.avn === "push") return this.#pushHandlers.get(push.topic)?.(push.payload);
    const batch = message as ReplyMessage;
    if (batch?.avn !== "replies" || !Array.isArray(batch.replies)) return;
    for (const reply of batch.replies) {
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (reply.error !== undefined) waiting?.reject(new IpcCallError(reply.error));
      else waiting?.resolve(reply.result);
    }
  };

  constructor() {
    if (process.send === undefined) throw new Error("not an API worker: no IPC channel to the primary");
    process.on("message", this.#onMessage);
  }

  /** Receives what the primary pushes on `topic` (one handler per topic). */
  onPush(topic: string, handler: (payload: unknown) => void): void {
    this.#pushHandlers.set(topic, handler);
  }

  /** The process's worker id in the cluster. */
  get workerId(): number {
    return cluster.worker?.id ?? 0;
  }

  call<T>(service: string, method: string, args: unknown[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const id = this.#nextId++;
      this.#waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (this.#outgoing.length === 0) setImmediate(() => this.#send());
      this.#outgoing.push({ id, service, method, args });
    });
  }

  #send(): void {
    const calls = this.#outgoing;
    this.#outgoing = [];
    if (!process.connected) {
      for (const { id } of calls) this.#reject(id, new IpcCallError("the API's primary process is gone"));
      return;
    }
    process.send!({ avn: "calls", calls } satisfies CallMessage, undefined, undefined, (error: Error | null) => {
      if (error !== null) for (const { id } of calls) this.#reject(id, new IpcCallError(`IPC to the primary failed: ${error.message}`));
    });
  }

  #reject(id: number, error: Error): void {
    this.#waiting.get(id)?.reject(error);
    this.#waiting.delete(id);
  }

  close(): void {
    this.#pushHandlers.clear();
    process.off("message", this.#onMessage);
  }
}
