import { Contract, getAddress, Interface, JsonRpcProvider, type JsonRpcPayload, type JsonRpcResult } from "ethers";

import { MAX_HELLO_LICENSES } from "../../common/hub-protocol.ts";
import type { ApiMetrics } from "../metrics.ts";

// The few NodeRegistry reads the hub needs, as human-readable ABI: the API runs without compiled artifacts.
const REGISTRY_ABI = new Interface([
  "function operatorOf(uint256 licenseId) view returns (address)",
  "function isLive(uint256 licenseId) view returns (bool)",
  "function quorum() view returns (uint256)",
]);

export interface LicenseCheckerOptions {
  l2RpcUrl: string;
  nodeRegistry: string;
  /** How long one license's on-chain state is reused before counting a signature for it (about one L2 block). */
  licenseTtlMs?: number;
  quorumTtlMs?: number;
  /** Counts the checker's L2 requests (`api_attestation_l2_requests_total`). */
  metrics?: Pick<ApiMetrics, "attestationL2Requests">;
}

/** A provider that reports each HTTP request it sends (`_send` carries one request: a call, or a batch of them). */
class CountingJsonRpcProvider extends JsonRpcProvider {
  onRequest: () => void = () => undefined;

  override _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    this.onRequest();
    return super._send(payload);
  }
}

/**
 * The hub's view of `NodeRegistry` and the quorum: which live licenses a burner operates. A license
 * counts for a burner only while `operatorOf(id) == burner` (void once the license changes hands) and
 * `isLive(id)`, exactly what the AttestationVerifier contract checks; the answers are reused for
 * `licenseTtlMs` so a burst of attestations costs a handful of L2 reads, not a few per signature.
 */
export class LicenseChecker {
  readonly #provider: JsonRpcProvider;
  readonly #nodeRegistry: Contract;
  readonly #loginProvider: JsonRpcProvider;
  readonly #loginRegistry: Contract;
  readonly #licenseTtlMs: number;
  readonly #quorumTtlMs: number;
  readonly #licenses = new Map<bigint, { at: number; state: Promise<{ operator: string; live: boolean }> }>();
  #quorum: { at: number; value: Promise<bigint> } | undefined;

  constructor(options: LicenseCheckerOptions) {
    // Logins read through a provider of their own, so that what a login flood costs the L2 is counted
    // apart from the rounds' and re-checks' reads (and their batches never mix).
    const providerFor = (purpose: "login" | "rounds") => {
      const provider = new CountingJsonRpcProvider(options.l2RpcUrl, undefined, {
        staticNetwork: true,
        batchMaxCount: MAX_HELLO_LICENSES + 1,
        batchStallTime: 0,
      });
      const { metrics } = options;
      if (metrics !== undefined) provider.onRequest = () => metrics.attestationL2Requests.inc({ purpose });
      return provider;
    };
    this.#provider = providerFor("rounds");
    this.#loginProvider = providerFor("login");
    this.#nodeRegistry = new Contract(options.nodeRegistry, REGISTRY_ABI, this.#provider);
    this.#loginRegistry = new Contract(options.nodeRegistry, REGISTRY_ABI, this.#loginProvider);
    this.#licenseTtlMs = options.licenseTtlMs ?? 1_000;
    this.#quorumTtlMs = options.quorumTtlMs ?? 10_000;
  }

  async chainId(): Promise<bigint> {
    return (await this.#provider.getNetwork()).chainId;
  }

  /**
   * Those of `licenseIds` (the ids a node named in its hello, at most `MAX_HELLO_LICENSES`) that `burner`
   * operates and that are live, read fresh (admission and the periodic re-check). The `operatorOf` calls are
   * made in one tick, so ethers sends them as one JSON-RPC batch (`batchMaxCount` holds a full hello);
   * `isLive` is read only for the operated ones, in a second batch. A hello from a key that operates none
   * of the ids it names therefore costs exactly one L2 request, however many ids it names, and no scan.
   */
  async operatedLiveLicenses(burner: string, licenseIds: readonly bigint[], options: { login?: boolean } = {}): Promise<bigint[]> {
    const registry = options.login === true ? this.#loginRegistry : this.#nodeRegistry;
    const signer = getAddress(burner);
    const operators = await Promise.all(licenseIds.map((id) => registry.operatorOf(id) as Promise<string>));
    const operated = licenseIds.filter((_, index) => getAddress(operators[index]) === signer);
    if (operated.length === 0) return [];
    const live = await Promise.all(operated.map((id) => registry.isLive(id) as Promise<boolean>));
    return operated.filter((_, index) => live[index]);
  }

  /** Those of `licenseIds` that count for `burner` now: delegated to it and live. */
  async countable(burner: string, licenseIds: readonly bigint[]): Promise<bigint[]> {
    const signer = getAddress(burner);
    const states = await Promise.all(licenseIds.map((id) => this.#licenseState(id)));
    return licenseIds.filter((_, index) => states[index].live && states[index].operator === signer);
  }

  /** `NodeRegistry.quorum()`: distinct live licenses an attestation needs. */
  quorum(): Promise<bigint> {
    const now = Date.now();
    if (this.#quorum === undefined || now - this.#quorum.at >= this.#quorumTtlMs) {
      const value = this.#nodeRegistry.quorum() as Promise<bigint>;
      this.#quorum = { at: now, value };
      value.catch(() => (this.#quorum = undefined));
    }
    return this.#quorum.value;
  }

  /** Forgets the cached license states (a re-check found a change). */
  forget(licenseIds: readonly bigint[]): void {
    for (const id of licenseIds) this.#licenses.delete(id);
  }

  destroy(): void {
    this.#provider.destroy();
    this.#loginProvider.destroy();
  }

  #licenseState(id: bigint): Promise<{ operator: string; live: boolean }> {
    const now = Date.now();
    const cached = this.#licenses.get(id);
    if (cached !== undefined && now - cached.at < this.#licenseTtlMs) return cached.state;
    const state = Promise.all([
      this.#nodeRegistry.operatorOf(id) as Promise<string>,
      this.#nodeRegistry.isLive(id) as Promise<boolean>,
    ]).then(([operator, live]) => ({ operator: getAddress(operator), live }));
    state.catch(() => this.#licenses.delete(id));
    this.#licenses.set(id, { at: now, state });
    if (this.#licenses.size > 10_000) this.#licenses.delete(this.#licenses.keys().next().value!);
    return state;
  }
}
