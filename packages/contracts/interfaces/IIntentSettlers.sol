// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { IDestinationSettler, IOriginSettler } from "./IERC7683.sol";
import { IStorageProofVerifier } from "./IStorageProofVerifier.sol";

/// @notice The order data of this settlement system (`orderData` of an ERC-7683 order is `abi.encode` of it, and
/// `orderDataType` is `keccak256` of its EIP-712 type string, `ORDER_DATA_TYPE()`). An order escrows
/// `inputAmount` of `inputToken` on the origin chain, and pays `outputAmount` of `outputToken` to `recipient` on
/// `destinationChainId`. Token address(0) is native ETH.
struct OrderData {
    address inputToken;
    uint256 inputAmount;
    address outputToken;
    uint256 outputAmount;
    address recipient;
    uint256 destinationChainId;
}

/// @notice What the destination settler is given for a fill (`FillInstruction.originData` is `abi.encode` of it;
/// it is 13 static words) and what settlement and refund take back: everything the order is. The order's id is
/// `keccak256(originData)`, so the id binds both chains, both settlers, the user, the nonce and the terms.
/// @custom:field gasless True for an order opened by `openFor` (its nonce is the user's Permit2 nonce), false for
/// `open` (its nonce is the user's count of orders opened with `open`).
struct OriginData {
    uint256 originChainId;
    address originSettler;
    address user;
    uint256 nonce;
    bool gasless;
    uint32 fillDeadline;
    address inputToken;
    uint256 inputAmount;
    address outputToken;
    uint256 outputAmount;
    address recipient;
    uint256 destinationChainId;
    address destinationSettler;
}

/// @title IIntentDestinationSettler
/// @notice The destination side of the intent layer (on L1, and on the L2 as `IReportingDestinationSettler`): a
/// filler pays an order's recipient, once and before the order's fill deadline, and the fill is recorded in storage
/// where the origin chain can prove it: the record of order `id` is the word at slot
/// `keccak256(abi.encode(id, FILLS_SLOT))`, which holds the repayment address in its low 160 bits and the fill's
/// timestamp in the 64 bits above them; it is never changed or deleted.
interface IIntentDestinationSettler is IDestinationSettler {
    /// @notice An order was filled: `recipient` received the output from `filler`, and the escrow is owed to
    /// `repayTo` on the origin chain.
    event Filled(bytes32 indexed orderId, address indexed filler, address indexed repayTo, address recipient);

    /// @notice `keccak256(originData)` is not the order id given.
    error DestinationSettler_WrongOrderId(bytes32 orderId, bytes32 originDataHash);
    /// @notice The order is to be filled on another chain, or through another settler.
    error DestinationSettler_WrongDestination(uint256 chainId, address settler);
    /// @notice The order's fill deadline has passed: its escrow goes back to the user.
    error DestinationSettler_FillExpired(bytes32 orderId, uint32 fillDeadline);
    /// @notice The order was filled already.
    error DestinationSettler_AlreadyFilled(bytes32 orderId, address repayTo);
    /// @notice The ETH sent is not the output (an ETH output), or is not 0 (a token output).
    error DestinationSettler_WrongValue(uint256 sent, uint256 expected);
    /// @notice `fillerData` is neither empty nor `abi.encode(address repayTo)` with a nonzero address.
    error DestinationSettler_BadFillerData();
    /// @notice The recipient refused the ETH.
    error DestinationSettler_PaymentFailed(address recipient);

    /// @notice The storage slot of the `fills` mapping, from which each order's record slot is derived.
    function FILLS_SLOT() external view returns (uint256);

    /// @notice The record of a fill, or zeros: who is repaid, and when the fill was made.
    function fills(bytes32 orderId) external view returns (address repayTo, uint64 filledAt);

    /// @notice The storage slot holding the record of `orderId`.
    function fillSlot(bytes32 orderId) external pure returns (bytes32);
}

/// @title IIntentOriginSettler
/// @notice The origin side of the intent layer, in both directions: orders are opened with their input escrowed,
/// and each is either settled to the filler the destination chain names (`IProvenOriginSettler`: a storage proof
/// of the L1 record, on the L2; `IMessagedOriginSettler`: a message of the L2 settler, on L1), or refunded to the
/// user once its fill deadline and the settlement window have passed.
interface IIntentOriginSettler is IOriginSettler {
    /// @notice An order's state: unknown, open (escrowed), settled (paid to its filler), refunded (paid back).
    enum OrderStatus {
        Unknown,
        Open,
        Settled,
        Refunded
    }

    /// @notice The escrow of an order went back to its user.
    event Refunded(bytes32 indexed orderId, address indexed user);
    /// @notice An ETH payment was refused by its payee, and is kept for it to withdraw (`withdrawOwed`).
    event PaymentDeferred(address indexed payee, uint256 amount);

    error OriginSettler_ZeroAddress();
    error OriginSettler_WrongOrderDataType(bytes32 orderDataType);
    error OriginSettler_MalformedOrderData();
    error OriginSettler_UnsupportedInputToken(address token);
    error OriginSettler_UnsupportedOutputToken(address token);
    error OriginSettler_ZeroAmount();
    error OriginSettler_ZeroRecipient();
    error OriginSettler_WrongDestinationChain(uint256 chainId);
    /// @notice The fill deadline is not in the next `MAX_FILL_PERIOD` seconds.
    error OriginSettler_BadFillDeadline(uint32 fillDeadline, uint256 latest);
    error OriginSettler_OpenDeadlinePassed(uint32 openDeadline);
    error OriginSettler_WrongOriginSettler(address originSettler);
    error OriginSettler_WrongOriginChain(uint256 chainId);
    /// @notice Native ETH cannot be escrowed by a third party's transaction: open it with `open`.
    error OriginSettler_NativeInputNotGasless();
    error OriginSettler_WrongValue(uint256 sent, uint256 expected);
    error OriginSettler_OrderExists(bytes32 orderId);
    error OriginSettler_OrderNotOpen(bytes32 orderId, OrderStatus status);
    error OriginSettler_RefundTooEarly(bytes32 orderId, uint256 refundableAfter);
    error OriginSettler_NothingOwed();
    error OriginSettler_PaymentFailed(address payee);

    /// @notice `keccak256` of the EIP-712 type string of {OrderData}: the only `orderDataType` accepted.
    function ORDER_DATA_TYPE() external view returns (bytes32);

    /// @notice Permit2's witness type string for `openFor`'s signature (the witness is the `GaslessCrossChainOrder`).
    function PERMIT2_WITNESS_TYPE_STRING() external view returns (string memory);

    /// @notice How far ahead of the opening block a fill deadline may be.
    function MAX_FILL_PERIOD() external view returns (uint256);

    /// @notice Seconds after the fill deadline during which only settlement can close an order; a refund comes
    /// after. It covers the way of the fill's news to this chain and the settlement transaction.
    function SETTLEMENT_WINDOW() external view returns (uint256);

    /// @notice The destination settler, whose fill records settle orders.
    function DESTINATION_SETTLER() external view returns (address);

    /// @notice The destination chain.
    function DESTINATION_CHAIN_ID() external view returns (uint256);

    /// @notice The input token accepted besides ETH (this chain's primary token).
    function INPUT_TOKEN() external view returns (address);

    /// @notice The output token accepted besides ETH (the destination chain's primary token).
    function OUTPUT_TOKEN() external view returns (address);

    /// @notice The Permit2 contract that `openFor` takes the input through.
    function PERMIT2() external view returns (address);

    /// @notice The state of an order: 0 unknown, 1 open, 2 settled, 3 refunded.
    function orderStatus(bytes32 orderId) external view returns (uint8);

    /// @notice The number of orders `user` has opened with `open`: the nonce of its next one.
    function openNonces(address user) external view returns (uint256);

    /// @notice ETH owed to a payee that refused it.
    function owed(address payee) external view returns (uint256);

    /// @notice Pays an open order's escrow back to its user, once `fillDeadline + SETTLEMENT_WINDOW` has passed.
    /// Anyone may call it.
    function refund(bytes calldata originData) external;

    /// @notice Pays the caller the ETH it is owed.
    function withdrawOwed() external;
}

/// @title IProvenOriginSettler
/// @notice The origin settler on the L2 (fast withdrawals, L2 → L1): an order is settled to the filler recorded in
/// the L1 destination settler's storage, proven against an L1 block the L2 knows.
interface IProvenOriginSettler is IIntentOriginSettler {
    /// @notice The escrow of an order was paid to its filler, on a proof at L1 block `l1BlockNumber`.
    event Settled(bytes32 indexed orderId, address indexed filler, uint256 l1BlockNumber);

    /// @notice The proof shows no fill record for the order at that L1 block.
    error OriginSettler_NotFilled(bytes32 orderId, uint256 l1BlockNumber);

    /// @notice The oldest L1 block a settlement proof may be at, in seconds before now.
    function MAX_PROOF_AGE() external view returns (uint256);

    /// @notice The verifier of L1 storage proofs.
    function VERIFIER() external view returns (IStorageProofVerifier);

    /// @notice Pays an open order's escrow to the filler recorded in the destination settler's storage, proven at
    /// an L1 block the L2 knows. Anyone may call it: the payee is the one the record names.
    /// @param originData The order's `FillInstruction.originData`.
    /// @param proof A `StorageProofVerifier` proof of the record's slot in the destination settler.
    function settle(bytes calldata originData, bytes calldata proof) external;
}

/// @title IMessagedOriginSettler
/// @notice The origin settler on L1 (fast deposits, L1 → L2): an order is settled to the filler that the L2
/// destination settler reports through the OP messenger (`IReportingDestinationSettler.reportFills`). The report is
/// an L2 → L1 message, so it arrives after the L2 output covering it is proven and the challenge period is over: the
/// user is paid on the L2 at once, and only the filler waits.
interface IMessagedOriginSettler is IIntentOriginSettler {
    /// @notice The escrow of an order was paid to the filler the destination settler reported.
    event SettledByMessage(bytes32 indexed orderId, address indexed filler);
    /// @notice A reported fill found its order no longer open (settled by an earlier report, or refunded).
    event ReportSkipped(bytes32 indexed orderId, OrderStatus status);

    /// @notice The call is not the L1 messenger relaying a message of the L2 destination settler.
    error OriginSettler_NotFromDestination(address sender);
    /// @notice A report's lists differ in length.
    error OriginSettler_MalformedReport();

    /// @notice The L1 cross-domain messenger, which relays the destination settler's reports.
    function MESSENGER() external view returns (address);

    /// @notice Gas an ETH payment to a filler may use: a filler's contract wallet that needs more is paid through
    /// `owed`, so that no payee can make a report's batch run out of gas.
    function PAYMENT_GAS() external view returns (uint256);

    /// @notice Settles reported fills: each open order among them is paid to its `repayTo`; one no longer open is
    /// skipped. Only the messenger, relaying the destination settler.
    /// @param originDatas The orders' `originData`.
    /// @param repayTos Who each order's escrow is owed to, from the fill records.
    function settleReported(bytes[] calldata originDatas, address[] calldata repayTos) external;
}

/// @title IReportingDestinationSettler
/// @notice The destination settler on the L2 (fast deposits, L1 → L2): fills are recorded as on L1, and reported to
/// the origin settler on L1 through the OP messenger, in batches.
interface IReportingDestinationSettler is IIntentDestinationSettler {
    /// @notice Fills were reported to `originSettler` on L1 in one message.
    event FillsReported(address indexed originSettler, uint256 count);

    error DestinationSettler_ZeroAddress();
    /// @notice A report names no order, or more than `MAX_REPORT`.
    error DestinationSettler_BadReportSize(uint256 count);
    /// @notice A reported order is not filled here.
    error DestinationSettler_NotFilled(bytes32 orderId);
    /// @notice The orders of one report have different origin settlers.
    error DestinationSettler_MixedOrigins(address first, address other);

    /// @notice The L2 cross-domain messenger.
    function MESSENGER() external view returns (address);

    /// @notice The most orders one report carries (the L1 relay's gas grows with it).
    function MAX_REPORT() external view returns (uint256);

    /// @notice L1 gas the relay of a report of `count` orders is given.
    function reportGasLimit(uint256 count) external pure returns (uint32);

    /// @notice Reports filled orders, all of one origin settler, to it on L1, with their fill records. Anyone may
    /// call it: a report only states what this contract recorded, and the origin settler pays each order once.
    function reportFills(bytes[] calldata originDatas) external;
}
