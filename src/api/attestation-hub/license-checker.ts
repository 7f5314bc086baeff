import { Contract, getAddress, Interface, JsonRpcProvider, type JsonRpcPayload, type JsonRpcResult } from "ethers";

import { MAX_HELLO_LICENSES } from "../../common/hub-protocol.ts";
import type { ApiMetrics } from "../metrics.ts";

// The few NodeRegistry reads the hub needs, as human-readable ABI: the API runs without compiled artifacts.
const REGISTRY_ABI = new Interface([
  "function operatorOf(uint256 licenseId) view returns (address)",
  "function isLive(uint256 licenseId) view returns (bool)",
  "function isLiveOperatorOf(address operator, uint256[] licenseIds) view returns (bool)",
  "function quorum() view returns (uint256)",
]);

export interface LicenseCheckerOptions {
  l2RpcUrl: string;
  nodeRegistry: string;
  /** How long a signer's license check is reused before counting another signature for it (about one L2 block). */
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

/** Most signers whose last license check is kept (the oldest is forgotten first). */
const MAX_CACHED_SIGNERS = 10_000;

/**
 * The hub's view of `NodeRegistry` and the quorum: which live licenses a burner operates. A license
 * counts for a burner only while `operatorOf(id) == burner` (void once the license changes hands) and
 * the burner heart-beat within the liveness window (`isLive(id)`), exactly what the AttestationVerifier
 * contract checks. A list is checked whole with `isLiveOperatorOf(burner, ids)`: one `eth_call` however
 * many ids it names (at most `MAX_HELLO_LICENSES`), so what a node's list costs the L2 does not grow with it.
 */
export class LicenseChecker {
  readonly #provider: JsonRpcProvider;
  readonly #nodeRegistry: Contract;
  readonly #loginProvider: JsonRpcProvider;
  readonly #loginRegistry: Contract;
  readonly #licenseTtlMs: number;
  readonly #quorumTtlMs: number;
  /** Each signer's last checked list (its ids joined) and the answer, reused for `licenseTtlMs`. */
  readonly #signers = new Map<string, { ids: string; at: number; live: Promise<boolean> }>();
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
   * Whether every one of `licenseIds` is delegated to `burner` and the burner is live, read fresh in one
   * `eth_call` of `NodeRegistry.isLiveOperatorOf`, however many ids it names (a hello names at most
   * `MAX_HELLO_LICENSES`) and with no scan. `login` reads through the provider whose requests are counted
   * as `purpose="login"`. False for an empty list: it names nothing to count.
   */
  async isLiveOperatorOf(burner: string, licenseIds: readonly bigint[], options: { login?: boolean } = {}): Promise<boolean> {
    if (licenseIds.length === 0) return false;
    const registry = options.login === true ? this.#loginRegistry : this.#nodeRegistry;
    return (await registry.isLiveOperatorOf(getAddress(burner), licenseIds)) as boolean;
  }

  /**
   * Those of `licenseIds` that `burner` operates and that are live, read fresh (the periodic re-check of an
   * admitted node). One `isLiveOperatorOf` while all of them are; only when it answers false, the ids one by
   * one: the `operatorOf` calls in one JSON-RPC batch (`batchMaxCount` holds a full list), then `isLive` of
   * the operated ones in a second, so a node that lost one license keeps the others. Only admitted nodes are
   * re-checked, at `ATTESTATION_RECHECK_MS`; a login never takes this path.
   */
  async operatedLiveLicenses(burner: string, licenseIds: readonly bigint[]): Promise<bigint[]> {
    if (await this.isLiveOperatorOf(burner, licenseIds)) return [...licenseIds];
    const signer = getAddress(burner);
    const registry = this.#nodeRegistry;
    const operators = await Promise.all(licenseIds.map((id) => registry.operatorOf(id) as Promise<string>));
    const operated = licenseIds.filter((_, index) => getAddress(operators[index]) === signer);
    if (operated.length === 0) return [];
    const live = await Promise.all(operated.map((id) => registry.isLive(id) as Promise<boolean>));
    return operated.filter((_, index) => live[index]);
  }

  /**
   * `licenseIds` when all of them count for `burner` now (delegated to it, the burner live), else none: a
   * signature counts with all of its licenses or not at all, as the verifier judges it
   * (`NodeRegistry.checkDelegations` fails the whole set for one license that is not live). One
   * `isLiveOperatorOf` per signer and list, reused for `licenseTtlMs`, so a burst of answers from one node
   * costs one `eth_call`, not two per license.
   */
  async countable(burner: string, licenseIds: readonly bigint[]): Promise<bigint[]> {
    const signer = getAddress(burner);
    const ids = licenseIds.join(",");
    const now = Date.now();
    let cached = this.#signers.get(signer);
    if (cached === undefined || cached.ids !== ids || now - cached.at >= this.#licenseTtlMs) {
      const entry = { ids, at: now, live: this.isLiveOperatorOf(signer, licenseIds) };
      entry.live.catch(() => this.#signers.get(signer) === entry && this.#signers.delete(signer));
      this.#signers.delete(signer); // re-inserted last: the Map's order is the eviction order
      this.#signers.set(signer, entry);
      if (this.#signers.size > MAX_CACHED_SIGNERS) this.#signers.delete(this.#signers.keys().next().value!);
      cached = entry;
    }
    return (await cached.live) ? [...licenseIds] : [];
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

  /** Forgets `burner`'s cached license check (a re-check read its licenses afresh). */
  forget(burner: string): void {
    this.#signers.delete(getAddress(burner));
  }

  destroy(): void {
    this.#provider.destroy();
    this.#loginProvider.destroy();
  }
}
