import { Contract, getAddress, Interface, JsonRpcProvider } from "ethers";

// The few NodeRegistry reads the hub needs, as human-readable ABI: the API runs without compiled artifacts.
const REGISTRY_ABI = new Interface([
  "function delegatedLicenses(address operator, uint256 fromId, uint256 maxScan) view returns (uint256[] licenseIds, uint256 nextFromId)",
  "function operatorOf(uint256 licenseId) view returns (address)",
  "function isLive(uint256 licenseId) view returns (bool)",
  "function quorum() view returns (uint256)",
]);
// One page of `delegatedLicenses` scans this many license ids (a view call, bounded by the node's gas cap).
const SCAN_PAGE = 2_000n;
const MAX_PAGES = 50;

export interface LicenseCheckerOptions {
  l2RpcUrl: string;
  nodeRegistry: string;
  /** How long one license's on-chain state is reused before counting a signature for it (about one L2 block). */
  licenseTtlMs?: number;
  quorumTtlMs?: number;
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
  readonly #licenseTtlMs: number;
  readonly #quorumTtlMs: number;
  readonly #licenses = new Map<bigint, { at: number; state: Promise<{ operator: string; live: boolean }> }>();
  #quorum: { at: number; value: Promise<bigint> } | undefined;

  constructor(options: LicenseCheckerOptions) {
    this.#provider = new JsonRpcProvider(options.l2RpcUrl, undefined, { staticNetwork: true, batchMaxCount: 20, batchStallTime: 0 });
    this.#nodeRegistry = new Contract(options.nodeRegistry, REGISTRY_ABI, this.#provider);
    this.#licenseTtlMs = options.licenseTtlMs ?? 1_000;
    this.#quorumTtlMs = options.quorumTtlMs ?? 10_000;
  }

  async chainId(): Promise<bigint> {
    return (await this.#provider.getNetwork()).chainId;
  }

  /** Every live license delegated to `burner` (read fresh: admission and the periodic re-check). */
  async liveLicensesOf(burner: string): Promise<bigint[]> {
    const delegated: bigint[] = [];
    let fromId = 1n;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const [ids, next] = (await this.#nodeRegistry.delegatedLicenses(burner, fromId, SCAN_PAGE)) as [bigint[], bigint];
      delegated.push(...ids);
      if (next === 0n) break;
      fromId = next;
    }
    const live = await Promise.all(delegated.map((id) => this.#nodeRegistry.isLive(id) as Promise<boolean>));
    return delegated.filter((_, index) => live[index]);
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
