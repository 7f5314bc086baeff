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

// Enough for any plausible network; beyond it the longest-disconnected burner is forgotten first.
const MAX_ENTRIES = 10_000;

/**
 * Per-node statistics of the hub, in memory (they start again with the API process; the Prometheus
 * counters keep the totals): an operator reads its burner's line at `GET /attest/nodes` to see whether
 * its node is admitted and agrees with the others.
 */
export class NodeStats {
  readonly #entries = new Map<string, NodeStatsEntry>();

  connected(burner: string, licenseIds: readonly bigint[]): void {
    const entry = this.#entry(burner);
    entry.connected = true;
    entry.connectedSince = new Date().toISOString();
    entry.licenseIds = licenseIds.map(String);
  }

  licenses(burner: string, licenseIds: readonly bigint[]): void {
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

  answered(burner: string, outcome: AnswerOutcome): void {
    const entry = this.#entry(burner);
    entry.answers[outcome] += 1;
    if (outcome !== "silent") entry.lastAnswerAt = new Date().toISOString();
  }

  /** Connected nodes first, then by burner. */
  list(): NodeStatsEntry[] {
    return [...this.#entries.values()]
      .map((entry) => ({ ...entry, answers: { ...entry.answers }, licenseIds: [...entry.licenseIds] }))
      .sort((a, b) => Number(b.connected) - Number(a.connected) || a.burner.localeCompare(b.burner));
  }

  get(burner: string): NodeStatsEntry | undefined {
    return this.list().find((entry) => entry.burner.toLowerCase() === burner.toLowerCase());
  }

  #entry(burner: string): NodeStatsEntry {
    let entry = this.#entries.get(burner);
    if (entry === undefined) {
      if (this.#entries.size >= MAX_ENTRIES) {
        const stale = [...this.#entries.values()].find((candidate) => !candidate.connected);
        if (stale !== undefined) this.#entries.delete(stale.burner);
      }
      entry = {
        burner,
        connected: false,
        licenseIds: [],
        connectedSince: null,
        lastAnswerAt: null,
        asked: 0,
        answers: Object.fromEntries(ANSWER_OUTCOMES.map((outcome) => [outcome, 0])) as Record<AnswerOutcome, number>,
      };
      this.#entries.set(burner, entry);
    }
    return entry;
  }
}
