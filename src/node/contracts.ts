import type { ContractRunner, Provider } from "ethers";

import { contractAt } from "../common/artifacts.ts";
import type { NodeLicense, NodeRegistry, VerificationRegistry } from "../../typechain-types/index.ts";

export function verificationRegistryAt(address: string, runner: ContractRunner): VerificationRegistry {
  return contractAt<VerificationRegistry>("VerificationRegistry", address, runner);
}

export function nodeRegistryAt(address: string, runner: ContractRunner): NodeRegistry {
  return contractAt<NodeRegistry>("NodeRegistry", address, runner);
}

export function nodeLicenseAt(address: string, runner: ContractRunner): NodeLicense {
  return contractAt<NodeLicense>("NodeLicense", address, runner);
}

/** The three contracts the node reads, as the registry names them (read once at start-up). */
export interface ProtocolAddresses {
  registry: string;
  nodeRegistry: string;
  license: string;
}

export interface ProtocolContracts {
  registry: VerificationRegistry;
  nodeRegistry: NodeRegistry;
  license: NodeLicense;
}

/**
 * The protocol's contracts bound to each L2 provider, made once per provider: the node fails over between
 * its URLs, and a contract must read through the provider in use. It exists only once the addresses are
 * known, so nothing can ask for a contract before discovery.
 */
export class ContractsByProvider {
  readonly addresses: ProtocolAddresses;
  readonly #cache = new WeakMap<Provider, ProtocolContracts>();

  constructor(addresses: ProtocolAddresses) {
    this.addresses = addresses;
  }

  on(provider: Provider): ProtocolContracts {
    let contracts = this.#cache.get(provider);
    if (contracts === undefined) {
      contracts = {
        registry: verificationRegistryAt(this.addresses.registry, provider),
        nodeRegistry: nodeRegistryAt(this.addresses.nodeRegistry, provider),
        license: nodeLicenseAt(this.addresses.license, provider),
      };
      this.#cache.set(provider, contracts);
    }
    return contracts;
  }
}
