// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

// ERC-7683 (cross-chain intents), the settler interface of its text at ethereum/ERCs 563555549 (2025-01-08): the last
// text that defines `IOriginSettler` and `IDestinationSettler`. The ERC is still a draft, and its 2026 redesign
// around view-only resolvers keeps these as the "previous draft"; their ABI (selectors, structs, the `Open` event)
// is what fillers built for ERC-7683 read. One change: `open` and `fill` are `payable` here, as the draft's
// discussion proposed, so that native ETH can be escrowed and paid out. Payability is not part of a selector, so
// the ABI is the text's.

/// @notice Standard order struct to be signed by users, disseminated to fillers, and submitted to origin settler
/// contracts by fillers.
// solhint-disable-next-line gas-struct-packing
struct GaslessCrossChainOrder {
    /// @dev The contract address that the order is meant to be settled by.
    address originSettler;
    /// @dev The address of the user who is initiating the swap, whose input tokens will be taken and escrowed.
    address user;
    /// @dev Nonce to be used as replay protection for the order.
    uint256 nonce;
    /// @dev The chainId of the origin chain.
    uint256 originChainId;
    /// @dev The timestamp by which the order must be opened.
    uint32 openDeadline;
    /// @dev The timestamp by which the order must be filled on the destination chain.
    uint32 fillDeadline;
    /// @dev Type identifier for the order data. This is an EIP-712 typehash.
    bytes32 orderDataType;
    /// @dev Arbitrary implementation-specific data.
    bytes orderData;
}

/// @notice Standard order struct for user-opened orders, where the user is the one submitting the order creation
/// transaction.
struct OnchainCrossChainOrder {
    /// @dev The timestamp by which the order must be filled on the destination chain.
    uint32 fillDeadline;
    /// @dev Type identifier for the order data. This is an EIP-712 typehash.
    bytes32 orderDataType;
    /// @dev Arbitrary implementation-specific data.
    bytes orderData;
}

/// @notice An implementation-generic representation of an order intended for filler consumption.
// solhint-disable-next-line gas-struct-packing
struct ResolvedCrossChainOrder {
    /// @dev The address of the user who is initiating the transfer.
    address user;
    /// @dev The chainId of the origin chain.
    uint256 originChainId;
    /// @dev The timestamp by which the order must be opened.
    uint32 openDeadline;
    /// @dev The timestamp by which the order must be filled on the destination chain(s).
    uint32 fillDeadline;
    /// @dev The unique identifier for this order within this settlement system.
    bytes32 orderId;
    /// @dev The max outputs that the filler will send.
    Output[] maxSpent;
    /// @dev The minimum outputs that must be given to the filler as part of order settlement. A `recipient` of
    /// address(0) means the filler is not known when the order is created.
    Output[] minReceived;
    /// @dev Each instruction parameterizes a single leg of the fill.
    FillInstruction[] fillInstructions;
}

/// @notice Tokens that must be received for a valid order fulfillment.
struct Output {
    /// @dev The address of the ERC20 token on the destination chain; address(0) for the native token.
    bytes32 token;
    /// @dev The amount of the token to be sent.
    uint256 amount;
    /// @dev The address to receive the output tokens.
    bytes32 recipient;
    /// @dev The destination chain for this output.
    uint256 chainId;
}

/// @notice Instructions to parameterize each leg of the fill.
struct FillInstruction {
    /// @dev The chain that this instruction is intended to be filled on.
    uint256 destinationChainId;
    /// @dev The contract address that the instruction is intended to be filled on.
    bytes32 destinationSettler;
    /// @dev The data generated on the origin chain needed by the destinationSettler to process the fill.
    bytes originData;
}

/// @title IOriginSettler
/// @notice Standard interface for settlement contracts on the origin chain.
interface IOriginSettler {
    /// @notice Signals that an order has been opened.
    /// @param orderId a unique order identifier within this settlement system
    /// @param resolvedOrder resolved order that would be returned by resolve if called instead of Open
    event Open(bytes32 indexed orderId, ResolvedCrossChainOrder resolvedOrder);

    /// @notice Opens a gasless cross-chain order on behalf of a user. To be called by the filler; emits `Open`.
    function openFor(GaslessCrossChainOrder calldata order, bytes calldata signature, bytes calldata originFillerData)
        external;

    /// @notice Opens a cross-chain order. To be called by the user; emits `Open`.
    function open(OnchainCrossChainOrder calldata order) external payable;

    /// @notice Resolves a GaslessCrossChainOrder into a generic ResolvedCrossChainOrder.
    function resolveFor(GaslessCrossChainOrder calldata order, bytes calldata originFillerData)
        external
        view
        returns (ResolvedCrossChainOrder memory);

    /// @notice Resolves an OnchainCrossChainOrder into a generic ResolvedCrossChainOrder.
    function resolve(OnchainCrossChainOrder calldata order) external view returns (ResolvedCrossChainOrder memory);
}

/// @title IDestinationSettler
/// @notice Standard interface for settlement contracts on the destination chain.
interface IDestinationSettler {
    /// @notice Fills a single leg of a particular order on the destination chain.
    /// @param orderId Unique order identifier for this order
    /// @param originData Data emitted on the origin to parameterize the fill
    /// @param fillerData Data provided by the filler to inform the fill or express their preferences
    function fill(bytes32 orderId, bytes calldata originData, bytes calldata fillerData) external payable;
}
