/** What became of one node's answer to one attestation round. */
export type AnswerOutcome = "agreed" | "disagreed" | "late" | "silent" | "refused" | "invalid" | "unlicensed";
export const ANSWER_OUTCOMES: readonly AnswerOutcome[] = ["agreed", "disagreed", "late", "silent", "refused", "invalid", "unlicensed"];

export interface NodeStatsEntry {
  burner: string;
  connected: boolean;
  /** The live licenses the hub last found delegated to this burner. */
  licenseIds: string[];
  connectedSince: string | null;
  lastAnswerAt: string | null;
  /** Rounds this node was asked to sign, and what became of its answers. */
  asked: number;
  answers: Record<AnswerOutcome, number>;
}

/** A node connected to some instance of the hub, as that instance publishes it (`bus/`). */
export interface PresentSession {
  burner: string;
  licenseIds: string[];
  /** ISO time of its login. */
  since: string;
}

/**
 * Where the counters of every instance of one hub meet (Redis, or a cluster's primary): the statistics
 * `GET /attest/nodes` serves, the same from every instance. Writes are fire-and-forget (a lost increment
 * costs a count, never an answer); `list` reads the counters and the live instances' sessions.
 */
export interface SharedNodeStats {
  seen(burner: string, licenseIds: readonly string[]): void;
  asked(burner: string): void;
  answered(burner: string, outcome: AnswerOutcome, at: string): void;
  list(): Promise<NodeStatsEntry[]>;
}

// Enough for any plausible network; beyond it the longest-disconnected burner is forgotten first.
const MAX_ENTRIES = 10_000;

/**
 * Counters per burner, in memory: one process's own statistics, and the table a cluster's primary keeps
 * for its workers. `connected` and `connectedSince` are set by the caller (`connected`/`disconnected`,
 * or `withPresence` from the sessions every instance publishes).
 */
export class NodeStatsTable {
  readonly #entries = new Map<string, NodeStatsEntry>();

  connected(burner: string, licenseIds: readonly (bigint | string)[], since = new Date().toISOString()): void {
    const entry = this.#entry(burner);
    entry.connected = true;
    entry.connectedSince = since;
    entry.licenseIds = licenseIds.map(String);
  }

  licenses(burner: string, licenseIds: readonly (bigint | string)[]): void {
    this.#entry(burner).licenseIds = licenseIds.map(String);
  }

  disconnected(burner: string): void {
    const entry = this.#entries.get(burner);
    if (entry === undefined) return;
    entry.connected = false;
    entry.connectedSince = null;
  }

  asked(burner: string): void {
    this.#entry(burner).asked += 1;
  }

  answered(burner: string, outcome: AnswerOutcome, at = new Date().toISOString()): void {
    const entry = this.#entry(burner);
    entry.answers[outcome] += 1;
    if (outcome !== "silent") entry.lastAnswerAt = at;
  }

  /** Connected nodes first, then by burner. */
  list(): NodeStatsEntry[] {
    return sortEntries([...this.#entries.values()].map(copyEntry));
  }

  get(burner: string): NodeStatsEntry | undefined {
    const entry = this.#entries.get(burner) ?? [...this.#entries.values()].find((e) => e.burner.toLowerCase() === burner.toLowerCase());
    return entry === undefined ? undefined : copyEntry(entry);
  }

  #entry(burner: string): NodeStatsEntry {
    let entry = this.#entries.get(burner);
    if (entry === undefined) {
      if (this.#entries.size >= MAX_ENTRIES) {
        const stale = [...this.#entries.values()].find((candidate) => !candidate.connected);
        if (stale !== undefined) this.#entries.delete(stale.burner);
      }
      entry = emptyEntry(burner);
      this.#entries.set(burner, entry);
    }
    return entry;
  }
}

/**
 * Per-node statistics of the hub. Sessions (sessions.ts) and rounds (rounds.ts) call the synchronous
 * methods; `list`/`get` are this process's own view (everything, for a hub of one process). With several
 * instances, every write also goes to `shared`, and `listAll` (what `GET /attest/nodes` serves) reads it:
 * the counters of rounds opened anywhere, and a node is connected when some live instance holds its session.
 */
export class NodeStats {
  readonly #table = new NodeStatsTable();
  readonly #shared: SharedNodeStats | undefined;
  readonly #onSessionsChanged: (() => void) | undefined;

  constructor(options: { shared?: SharedNodeStats; onSessionsChanged?: () => void } = {}) {
    this.#shared = options.shared;
    this.#onSessionsChanged = options.onSessionsChanged;
  }

  connected(burner: string, licenseIds: readonly bigint[]): void {
    this.#table.connected(burner, licenseIds);
    this.#shared?.seen(burner, licenseIds.map(String));
    this.#onSessionsChanged?.();
  }

  licenses(burner: string, licenseIds: readonly bigint[]): void {
    this.#table.licenses(burner, licenseIds);
    this.#shared?.seen(burner, licenseIds.map(String));
    this.#onSessionsChanged?.();
  }

  disconnected(burner: string): void {
    this.#table.disconnected(burner);
    this.#onSessionsChanged?.();
  }

  asked(burner: string): void {
    this.#table.asked(burner);
    this.#shared?.asked(burner);
  }

  answered(burner: string, outcome: AnswerOutcome): void {
    const at = new Date().toISOString();
    this.#table.answered(burner, outcome, at);
    this.#shared?.answered(burner, outcome, at);
  }

  /** This process's view: connected nodes first, then by burner. */
  list(): NodeStatsEntry[] {
    return this.#table.list();
  }

  get(burner: string): NodeStatsEntry | undefined {
    return this.#table.get(burner);
  }

  /** Every instance's view (the shared counters and sessions), or this process's when it is alone. */
  async listAll(): Promise<NodeStatsEntry[]> {
    return this.#shared === undefined ? this.list() : this.#shared.list();
  }
}

export function emptyEntry(burner: string): NodeStatsEntry {
  return {
    burner,
    connected: false,
    licenseIds: [],
    connectedSince: null,
    lastAnswerAt: null,
    asked: 0,
    answers: Object.fromEntries(ANSWER_OUTCOMES.map((outcome) => [outcome, 0])) as Record<AnswerOutcome, number>,
  };
}

/**
 * Counters joined with the sessions live instances publish: a node is connected when one of them holds
 * its session, with that session's
 * licenses; a node never counted yet is listed from its session alone. When two instances list one node
 * (it moved, and the one it left died without withdrawing its presence yet) the later login is its session.
 */
export function withPresence(entries: readonly NodeStatsEntry[], sessions: readonly PresentSession[]): NodeStatsEntry[] {
  const present = new Map<string, PresentSession>();
  for (const session of sessions) {
    const known = present.get(session.burner);
    if (known === undefined || session.since > known.since) present.set(session.burner, session);
  }
  const byBurner = new Map<string, NodeStatsEntry>(
    entries.map((entry) => [entry.burner, { ...copyEntry(entry), connected: false, connectedSince: null }]),
  );
  for (const session of present.values()) {
    const entry: NodeStatsEntry = byBurner.get(session.burner) ?? emptyEntry(session.burner);
    entry.connected = true;
    entry.connectedSince = session.since;
    entry.licenseIds = [...session.licenseIds];
    byBurner.set(session.burner, entry);
  }
  return sortEntries([...byBurner.values()]);
}

function copyEntry(entry: NodeStatsEntry): NodeStatsEntry {
  return { ...entry, answers: { ...entry.answers }, licenseIds: [...entry.licenseIds] };
}

function sortEntries(entries: NodeStatsEntry[]): NodeStatsEntry[] {
  return entries.sort((a, b) => Number(b.connected) - Number(a.connected) || a.burner.localeCompare(b.burner));
}
