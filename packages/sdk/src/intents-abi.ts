import { parseAbi } from "viem";

/**
 * The parts of the intent settlers (`@avn/contracts/interfaces/IERC7683.sol` and `IIntentSettlers.sol`) the SDK
 * and an app built on it call, with every custom error they can revert with, so that viem decodes a revert to its
 * name. Written out rather than imported from the build's artifacts, as `abi.ts` is: the package ships without
 * them. `test/ts/sdk/Intents.ts` checks each fragment against the compiled interfaces, and calls the deployed
 * settlers with them.
 */

/** ERC-7683's structs, as the settlers' functions and the `Open` event take them. */
const ERC7683_STRUCTS = [
  "struct Output { bytes32 token; uint256 amount; bytes32 recipient; uint256 chainId; }",
  "struct FillInstruction { uint256 destinationChainId; bytes32 destinationSettler; bytes originData; }",
  "struct ResolvedCrossChainOrder { address user; uint256 originChainId; uint32 openDeadline; uint32 fillDeadline; bytes32 orderId; Output[] maxSpent; Output[] minReceived; FillInstruction[] fillInstructions; }",
  "struct OnchainCrossChainOrder { uint32 fillDeadline; bytes32 orderDataType; bytes orderData; }",
  "struct GaslessCrossChainOrder { address originSettler; address user; uint256 nonce; uint256 originChainId; uint32 openDeadline; uint32 fillDeadline; bytes32 orderDataType; bytes orderData; }",
] as const;

/**
 * `IIntentOriginSettler` (either direction's origin: the L2's `OriginSettler`, L1's `L1OriginSettler`): opening,
 * resolving, an order's status and the settings an order is checked against. `Settled` is the L2 settler's.
 */
export const originSettlerAbi = parseAbi([
  ...ERC7683_STRUCTS,

  "function open(OnchainCrossChainOrder order) payable",
  "function openFor(GaslessCrossChainOrder order, bytes signature, bytes originFillerData)",
  "function resolve(OnchainCrossChainOrder order) view returns (ResolvedCrossChainOrder)",
  "function resolveFor(GaslessCrossChainOrder order, bytes originFillerData) view returns (ResolvedCrossChainOrder)",
  "function orderStatus(bytes32 orderId) view returns (uint8)",
  "function openNonces(address user) view returns (uint256)",
  "function ORDER_DATA_TYPE() view returns (bytes32)",
  "function MAX_FILL_PERIOD() view returns (uint256)",
  "function SETTLEMENT_WINDOW() view returns (uint256)",
  "function INPUT_TOKEN() view returns (address)",
  "function OUTPUT_TOKEN() view returns (address)",
  "function DESTINATION_CHAIN_ID() view returns (uint256)",
  "function DESTINATION_SETTLER() view returns (address)",
  "function PERMIT2() view returns (address)",

  "event Open(bytes32 indexed orderId, ResolvedCrossChainOrder resolvedOrder)",
  "event Settled(bytes32 indexed orderId, address indexed filler, uint256 l1BlockNumber)",
  "event Refunded(bytes32 indexed orderId, address indexed user)",

  // What opening can revert with (IIntentOriginSettler), and SafeERC20's for a token input the settler could not take.
  "error OriginSettler_WrongOrderDataType(bytes32 orderDataType)",
  "error OriginSettler_MalformedOrderData()",
  "error OriginSettler_UnsupportedInputToken(address token)",
  "error OriginSettler_UnsupportedOutputToken(address token)",
  "error OriginSettler_ZeroAmount()",
  "error OriginSettler_ZeroRecipient()",
  "error OriginSettler_WrongDestinationChain(uint256 chainId)",
  "error OriginSettler_BadFillDeadline(uint32 fillDeadline, uint256 latest)",
  "error OriginSettler_OpenDeadlinePassed(uint32 openDeadline)",
  "error OriginSettler_WrongOriginSettler(address originSettler)",
  "error OriginSettler_WrongOriginChain(uint256 chainId)",
  "error OriginSettler_NativeInputNotGasless()",
  "error OriginSettler_WrongValue(uint256 sent, uint256 expected)",
  "error OriginSettler_OrderExists(bytes32 orderId)",
  "error SafeERC20FailedOperation(address token)",
]);

/** `IIntentDestinationSettler` (the L1 side): an order's fill record, and the fill itself. */
export const destinationSettlerAbi = parseAbi([
  "function fills(bytes32 orderId) view returns (address repayTo, uint64 filledAt)",
  "function fill(bytes32 orderId, bytes originData, bytes fillerData) payable",
  "event Filled(bytes32 indexed orderId, address indexed filler, address indexed repayTo, address recipient)",
  "error DestinationSettler_WrongOrderId(bytes32 orderId, bytes32 originDataHash)",
  "error DestinationSettler_WrongDestination(uint256 chainId, address settler)",
  "error DestinationSettler_FillExpired(bytes32 orderId, uint32 fillDeadline)",
  "error DestinationSettler_AlreadyFilled(bytes32 orderId, address repayTo)",
  "error DestinationSettler_WrongValue(uint256 sent, uint256 expected)",
  "error DestinationSettler_BadFillerData()",
  "error DestinationSettler_PaymentFailed(address recipient)",
]);
