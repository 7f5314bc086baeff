import type {
  AccountRuntimeValue,
  ContractAtFuture,
  ModuleParameterRuntimeValue,
  NamedArtifactContractAtFuture,
  NamedArtifactContractDeploymentFuture,
} from "@nomicfoundation/ignition-core";

/** A token contract future: one the module deploys, or one it found on chain (`contractAt`). */
export type TokenFuture = NamedArtifactContractDeploymentFuture<string> | NamedArtifactContractAtFuture<string> | ContractAtFuture;

/** Who administers a contract: an account of the deployment or an address parameter (with such a default). */
export type AdminArgument = AccountRuntimeValue | ModuleParameterRuntimeValue<string> | ModuleParameterRuntimeValue<AccountRuntimeValue>;
