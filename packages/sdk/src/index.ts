/**
 * @avn/sdk: the Asset Verification Network's TypeScript client. The API's answers with exact integers
 * (client.ts), attestations verified off-chain and by the verifier contract (verify.ts), recorded safely
 * (record.ts), fast withdrawals through the intent settlers (intents.ts), and the pinned definitions an
 * integrator's contract call needs (typed-data.ts, abi.ts, intents-abi.ts and the protocol package's, bundled
 * into this package's build).
 */

export { AvnClient } from "./client.ts";
export type {
  AvnClientOptions,
  BalanceProof,
  BalanceResult,
  BatchEntry,
  CallOptions,
  ConditionLeafResult,
  ConditionResult,
  EvmBalanceQuery,
  EvmBalanceResult,
  EvmBatchResult,
  SvmBalanceQuery,
  SvmBalanceResult,
  SvmBatchResult,
} from "./client.ts";
// Every error the SDK throws, each an AvnError with a stable `code`, and what each call throws.
export {
  AvnApiError,
  InvalidArgumentError,
  MalformedAttestationError,
  NotRecordableError,
  RecordRevertedError,
  StaleAttestationError,
  TransactionRevertedError,
  UnexpectedVerifierError,
  UnsupportedRuntimeError,
  WrongChainError,
  type AvnClientError,
  type RecordAttestationError,
  type ToContractAttestationError,
  type VerifyAttestationError,
} from "./errors.ts";
// The base, so that `instanceof AvnError` holds for every error above and for ConditionInputError.
export { AvnError } from "@avn/protocol/errors";
export { parseJsonExact, SUPPORTED_RUNTIMES, type JsonInteger } from "./json.ts";
export { exportToEAS, type ExportToEasOptions, type ExportToEasResult } from "./eas.ts";
export { Subscriptions, type Subscription, type SubscriptionRequest } from "./subscriptions.ts";
export { verifyWebhook, type WebhookEvent } from "./webhooks.ts";
export { WEBHOOK_SIGNATURE_HEADER, WebhookSignatureError, type WebhookSignatureFailure } from "@avn/protocol/webhook-signature";
export type { CreatedSubscription, DeliveryAttempt, WebhookChain } from "@avn/protocol/webhook-wire";
export type {
  ApiEnvelope,
  AssetJson,
  BalanceProofJson,
  BatchEntryJson,
  ConditionData,
  ConditionInput,
  ConditionLeafJson,
  ConditionRequestBody,
  EthereumLeafInput,
  EvmBalanceData,
  EvmBatchData,
  SolanaLeafInput,
  SvmBalanceData,
  SvmBatchData,
} from "./wire.ts";

export { DEFAULT_MAX_AGE, verifyAttestation, type VerificationResult, type VerifyOptions } from "./verify.ts";
export { DEFAULT_STALE_MARGIN_SECONDS, recordAttestation, type RecordOptions, type RecordResult } from "./record.ts";
export {
  attestationDigest,
  attestationTypedData,
  isConditionAttestation,
  toContractAttestation,
  type AnyAttestationJson,
  type BalanceTypedData,
  type ConditionTypedData,
  type ContractBalanceAttestation,
  type ContractBalanceAttestationArgs,
  type ContractConditionAttestation,
  type ContractConditionAttestationArgs,
  type ContractDomain,
  type ContractNodeSignature,
} from "./typed-data.ts";
export { attestationExporterAbi, attestationVerifierAbi } from "./abi.ts";
// The intent layer's fast withdrawal (L2 -> L1): opening an order, following it, signing a gasless one.
export {
  DEFAULT_FILL_PERIOD_SECONDS,
  openOrder,
  orderStatus,
  signGaslessOrder,
  type FillRecord,
  type OpenedOrder,
  type OpenOrderError,
  type OpenOrderOptions,
  type OrderStatusOptions,
  type OrderStatusResult,
  type SignGaslessOrderOptions,
} from "./intents.ts";
export { destinationSettlerAbi, originSettlerAbi } from "./intents-abi.ts";
export {
  decodeOriginData,
  gaslessOrderStruct,
  NATIVE_TOKEN,
  ORDER_DATA_TYPE,
  orderIdOf,
  PERMIT2_ADDRESS,
  type GaslessOrder,
  type OrderStatusName,
  type OrderTerms,
  type OriginData,
} from "@avn/protocol/intents";

// The protocol's pinned definitions, one copy for the node, the API, the web app and this package.
export {
  ATTESTATION_DOMAIN_NAME,
  ATTESTATION_DOMAIN_VERSION,
  AttestedChain,
  BALANCE_ATTESTATION_TYPE,
  BALANCE_ATTESTATION_TYPES,
  LICENSED_BALANCE_ATTESTATION_TYPE,
  LICENSED_BALANCE_ATTESTATION_TYPES,
  MAX_ATTESTATION_LICENSES,
  SIGNED_PRIMARY_TYPE,
} from "@avn/protocol/attestation";
// The answers' JSON types, inferred from the zod schemas the API's response schema is generated from.
export type { AttestationJson, ConditionAttestationJson } from "@avn/protocol/attestation-kinds";
export {
  CONDITION_ATTESTATION_TYPE,
  CONDITION_ATTESTATION_TYPES,
  CONDITION_SIGNED_PRIMARY_TYPE,
  ConditionInputError,
  LICENSED_CONDITION_ATTESTATION_TYPE,
  LICENSED_CONDITION_ATTESTATION_TYPES,
  MAX_CONDITION_DEPTH,
  MAX_CONDITION_LEAVES,
  conditionHash,
  linkMessage,
  ownersHash,
} from "@avn/protocol/conditions";
