// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { SafeERC20 } from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {
    FillInstruction,
    GaslessCrossChainOrder,
    OnchainCrossChainOrder,
    Output,
    ResolvedCrossChainOrder
} from "@avn/contracts/interfaces/IERC7683.sol";
import { IIntentOriginSettler, OrderData, OriginData } from "@avn/contracts/interfaces/IIntentSettlers.sol";
import { IPermit2SignatureTransfer } from "@avn/contracts/interfaces/IPermit2SignatureTransfer.sol";

/// @title OriginSettlerBase
/// @notice See {IIntentOriginSettler}: opening, resolving, refunds and payments, the same in both directions. The
/// two origin settlers differ only in how they learn of a fill (`OriginSettler`: a storage proof of the L1 record;
/// `L1OriginSettler`: a message of the L2 settler), and close an order through `_settleOpen`.
/// @dev Only an order's status is stored: settlement and refund take the order back as its `originData` and find it
/// by its hash, so that `open` writes one new slot besides the escrow. No admin; the settings are immutable.
abstract contract OriginSettlerBase is IIntentOriginSettler {
    using SafeERC20 for IERC20;

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    // solhint-disable-next-line gas-small-strings
    string private constant _ORDER_DATA_TYPE_STRING =
        "OrderData(address inputToken,uint256 inputAmount,address outputToken,uint256 outputAmount,address recipient,uint256 destinationChainId)";

    /// @inheritdoc IIntentOriginSettler
    bytes32 public constant ORDER_DATA_TYPE = keccak256(bytes(_ORDER_DATA_TYPE_STRING));

    /// @dev The gasless order's EIP-712 type, with its order data as a nested struct, so that a wallet shows the
    /// terms the user signs (ERC-7683's advice for a Permit2 witness).
    // solhint-disable-next-line gas-small-strings
    string private constant _GASLESS_ORDER_TYPE_STRING =
        "GaslessCrossChainOrder(address originSettler,address user,uint256 nonce,uint256 originChainId,uint32 openDeadline,uint32 fillDeadline,bytes32 orderDataType,OrderData orderData)";
    bytes32 private constant _GASLESS_ORDER_TYPEHASH =
        keccak256(abi.encodePacked(_GASLESS_ORDER_TYPE_STRING, _ORDER_DATA_TYPE_STRING));

    /// @inheritdoc IIntentOriginSettler
    /// @dev The referenced types follow the witness in EIP-712's (alphabetical) order.
    // solhint-disable gas-small-strings
    string public constant PERMIT2_WITNESS_TYPE_STRING = string(
        abi.encodePacked(
            "GaslessCrossChainOrder witness)",
            _GASLESS_ORDER_TYPE_STRING,
            _ORDER_DATA_TYPE_STRING,
            "TokenPermissions(address token,uint256 amount)"
        )
    );
    // solhint-enable gas-small-strings

    /// @inheritdoc IIntentOriginSettler
    uint256 public constant MAX_FILL_PERIOD = 1 days;

    /// @dev `abi.encode(OrderData)`: six static words.
    uint256 private constant _ORDER_DATA_LENGTH = 6 * 32;

    /// @dev An order opened with `open` has no opening deadline (ERC-7683's `openDeadline` is for gasless orders).
    uint32 private constant _NO_OPEN_DEADLINE = type(uint32).max;

    /*//////////////////////////////////////////////////////////////
                               IMMUTABLES
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IIntentOriginSettler
    address public immutable DESTINATION_SETTLER;
    /// @inheritdoc IIntentOriginSettler
    uint256 public immutable DESTINATION_CHAIN_ID;
    /// @inheritdoc IIntentOriginSettler
    address public immutable INPUT_TOKEN;
    /// @inheritdoc IIntentOriginSettler
    address public immutable OUTPUT_TOKEN;
    /// @inheritdoc IIntentOriginSettler
    address public immutable PERMIT2;
    /// @inheritdoc IIntentOriginSettler
    uint256 public immutable SETTLEMENT_WINDOW;

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    mapping(bytes32 orderId => OrderStatus status) private _status;

    /// @inheritdoc IIntentOriginSettler
    mapping(address user => uint256 nonce) public openNonces;

    /// @inheritdoc IIntentOriginSettler
    mapping(address payee => uint256 amount) public owed;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param destinationSettler The destination settler, which fills are recorded by.
    /// @param destinationChainId The destination chain.
    /// @param inputToken This chain's primary token.
    /// @param outputToken The destination chain's primary token.
    /// @param permit2 The Permit2 contract of this chain.
    /// @param settlementWindow Seconds after a fill deadline before a refund.
    constructor(
        address destinationSettler,
        uint256 destinationChainId,
        address inputToken,
        address outputToken,
        address permit2,
        uint256 settlementWindow
    ) {
        if (
            destinationSettler == address(0) || inputToken == address(0) || outputToken == address(0)
                || permit2 == address(0)
        ) revert OriginSettler_ZeroAddress();
        DESTINATION_SETTLER = destinationSettler;
        DESTINATION_CHAIN_ID = destinationChainId;
        INPUT_TOKEN = inputToken;
        OUTPUT_TOKEN = outputToken;
        PERMIT2 = permit2;
        SETTLEMENT_WINDOW = settlementWindow;
    }

    /*//////////////////////////////////////////////////////////////
                                OPENING
    //////////////////////////////////////////////////////////////*/

    /// @notice Opens an order of the caller's, escrowing its input: `msg.value` for ETH, else `transferFrom` of an
    /// allowance given to this contract. The order's nonce is the caller's `openNonces`.
    function open(OnchainCrossChainOrder calldata order) external payable {
        uint256 nonce = openNonces[msg.sender]++;
        (OriginData memory data, ResolvedCrossChainOrder memory resolved) =
            _resolve(order.fillDeadline, order.orderDataType, order.orderData, msg.sender, nonce, false, _NO_OPEN_DEADLINE);
        _markOpen(resolved.orderId);
        if (data.inputToken == address(0)) {
            if (msg.value != data.inputAmount) revert OriginSettler_WrongValue(msg.value, data.inputAmount);
        } else {
            if (msg.value != 0) revert OriginSettler_WrongValue(msg.value, 0);
            IERC20(data.inputToken).safeTransferFrom(msg.sender, address(this), data.inputAmount);
        }
        emit Open(resolved.orderId, resolved);
    }

    /// @notice Opens a user's order on the user's Permit2 signature (`PERMIT2_WITNESS_TYPE_STRING`: the transfer of
    /// the input to this contract, with the order as its witness; Permit2's nonce is the order's `nonce` and its
    /// deadline the order's `openDeadline`). Anyone may submit it. Only a token input can be gasless.
    function openFor(GaslessCrossChainOrder calldata order, bytes calldata signature, bytes calldata) external {
        if (block.timestamp > order.openDeadline) revert OriginSettler_OpenDeadlinePassed(order.openDeadline);
        (OriginData memory data, ResolvedCrossChainOrder memory resolved) = _resolveGasless(order);
        if (data.inputToken == address(0)) revert OriginSettler_NativeInputNotGasless();
        _markOpen(resolved.orderId);
        IPermit2SignatureTransfer(PERMIT2).permitWitnessTransferFrom(
            IPermit2SignatureTransfer.PermitTransferFrom({
                permitted: IPermit2SignatureTransfer.TokenPermissions({ token: data.inputToken, amount: data.inputAmount }),
                nonce: order.nonce,
                deadline: order.openDeadline
            }),
            IPermit2SignatureTransfer.SignatureTransferDetails({ to: address(this), requestedAmount: data.inputAmount }),
            order.user,
            _witness(order),
            PERMIT2_WITNESS_TYPE_STRING,
            signature
        );
        emit Open(resolved.orderId, resolved);
    }

    /// @notice The order `open` would open if the caller sent it now (its nonce is the caller's next).
    function resolve(OnchainCrossChainOrder calldata order) external view returns (ResolvedCrossChainOrder memory resolved) {
        (, resolved) = _resolve(
            order.fillDeadline, order.orderDataType, order.orderData, msg.sender, openNonces[msg.sender], false, _NO_OPEN_DEADLINE
        );
    }

    /// @notice The order `openFor` would open.
    function resolveFor(GaslessCrossChainOrder calldata order, bytes calldata)
        external
        view
        returns (ResolvedCrossChainOrder memory resolved)
    {
        (, resolved) = _resolveGasless(order);
    }

    /*//////////////////////////////////////////////////////////////
                                REFUND
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IIntentOriginSettler
    function refund(bytes calldata originData) external {
        bytes32 orderId = keccak256(originData);
        _requireOpen(orderId);
        OriginData memory data = abi.decode(originData, (OriginData));
        uint256 refundableAfter = uint256(data.fillDeadline) + SETTLEMENT_WINDOW;
        if (block.timestamp <= refundableAfter) revert OriginSettler_RefundTooEarly(orderId, refundableAfter);
        _status[orderId] = OrderStatus.Refunded;
        emit Refunded(orderId, data.user);
        _pay(data.user, data.inputToken, data.inputAmount, gasleft());
    }

    /// @inheritdoc IIntentOriginSettler
    function withdrawOwed() external {
        uint256 amount = owed[msg.sender];
        if (amount == 0) revert OriginSettler_NothingOwed();
        owed[msg.sender] = 0;
        (bool paid,) = msg.sender.call{ value: amount }("");
        if (!paid) revert OriginSettler_PaymentFailed(msg.sender);
    }

    /// @inheritdoc IIntentOriginSettler
    function orderStatus(bytes32 orderId) external view returns (uint8) {
        return uint8(_status[orderId]);
    }

    /*//////////////////////////////////////////////////////////////
                               INTERNAL
    //////////////////////////////////////////////////////////////*/

    /// @dev Closes an open order as settled and pays its escrow to `filler` (ETH with at most `ethGas` gas).
    function _settleOpen(bytes32 orderId, OriginData memory data, address filler, uint256 ethGas) internal {
        _status[orderId] = OrderStatus.Settled;
        _pay(filler, data.inputToken, data.inputAmount, ethGas);
    }

    /// @dev The status of an order, for the settlements.
    function _statusOf(bytes32 orderId) internal view returns (OrderStatus) {
        return _status[orderId];
    }

    function _requireOpen(bytes32 orderId) internal view {
        OrderStatus status = _status[orderId];
        if (status != OrderStatus.Open) revert OriginSettler_OrderNotOpen(orderId, status);
    }

    /*//////////////////////////////////////////////////////////////
                                PRIVATE
    //////////////////////////////////////////////////////////////*/

    function _resolveGasless(GaslessCrossChainOrder calldata order)
        private
        view
        returns (OriginData memory data, ResolvedCrossChainOrder memory resolved)
    {
        if (order.originSettler != address(this)) revert OriginSettler_WrongOriginSettler(order.originSettler);
        if (order.originChainId != block.chainid) revert OriginSettler_WrongOriginChain(order.originChainId);
        return _resolve(
            order.fillDeadline, order.orderDataType, order.orderData, order.user, order.nonce, true, order.openDeadline
        );
    }

    /// @dev Checks an order's terms and builds what it is: its `originData` and the ERC-7683 view of it.
    function _resolve(
        uint32 fillDeadline,
        bytes32 orderDataType,
        bytes calldata orderData,
        address user,
        uint256 nonce,
        bool gasless,
        uint32 openDeadline
    ) private view returns (OriginData memory data, ResolvedCrossChainOrder memory resolved) {
        OrderData memory terms = _checkedTerms(orderDataType, orderData);
        uint256 latest = block.timestamp + MAX_FILL_PERIOD;
        if (fillDeadline <= block.timestamp || fillDeadline > latest) {
            revert OriginSettler_BadFillDeadline(fillDeadline, latest);
        }
        data = OriginData({
            originChainId: block.chainid,
            originSettler: address(this),
            user: user,
            nonce: nonce,
            gasless: gasless,
            fillDeadline: fillDeadline,
            inputToken: terms.inputToken,
            inputAmount: terms.inputAmount,
            outputToken: terms.outputToken,
            outputAmount: terms.outputAmount,
            recipient: terms.recipient,
            destinationChainId: DESTINATION_CHAIN_ID,
            destinationSettler: DESTINATION_SETTLER
        });
        resolved = _resolved(data, openDeadline);
    }

    function _checkedTerms(bytes32 orderDataType, bytes calldata orderData) private view returns (OrderData memory terms) {
        if (orderDataType != ORDER_DATA_TYPE) revert OriginSettler_WrongOrderDataType(orderDataType);
        // Exactly the canonical encoding: trailing or missing bytes are refused rather than ignored.
        if (orderData.length != _ORDER_DATA_LENGTH) revert OriginSettler_MalformedOrderData();
        terms = abi.decode(orderData, (OrderData));
        if (terms.inputToken != address(0) && terms.inputToken != INPUT_TOKEN) {
            revert OriginSettler_UnsupportedInputToken(terms.inputToken);
        }
        if (terms.outputToken != address(0) && terms.outputToken != OUTPUT_TOKEN) {
            revert OriginSettler_UnsupportedOutputToken(terms.outputToken);
        }
        if (terms.inputAmount == 0 || terms.outputAmount == 0) revert OriginSettler_ZeroAmount();
        if (terms.recipient == address(0)) revert OriginSettler_ZeroRecipient();
        if (terms.destinationChainId != DESTINATION_CHAIN_ID) {
            revert OriginSettler_WrongDestinationChain(terms.destinationChainId);
        }
    }

    function _resolved(OriginData memory data, uint32 openDeadline)
        private
        view
        returns (ResolvedCrossChainOrder memory resolved)
    {
        bytes memory originData = abi.encode(data);
        Output[] memory maxSpent = new Output[](1);
        maxSpent[0] = Output({
            token: bytes32(uint256(uint160(data.outputToken))),
            amount: data.outputAmount,
            recipient: bytes32(uint256(uint160(data.recipient))),
            chainId: data.destinationChainId
        });
        // The filler is not known when the order opens: the recipient of what it receives is left zero.
        Output[] memory minReceived = new Output[](1);
        minReceived[0] = Output({
            token: bytes32(uint256(uint160(data.inputToken))),
            amount: data.inputAmount,
            recipient: bytes32(0),
            chainId: block.chainid
        });
        FillInstruction[] memory fillInstructions = new FillInstruction[](1);
        fillInstructions[0] = FillInstruction({
            destinationChainId: data.destinationChainId,
            destinationSettler: bytes32(uint256(uint160(data.destinationSettler))),
            originData: originData
        });
        resolved = ResolvedCrossChainOrder({
            user: data.user,
            originChainId: block.chainid,
            openDeadline: openDeadline,
            fillDeadline: data.fillDeadline,
            orderId: keccak256(originData),
            maxSpent: maxSpent,
            minReceived: minReceived,
            fillInstructions: fillInstructions
        });
    }

    /// @dev The EIP-712 hash of the gasless order, its order data hashed as the nested {OrderData} struct (whose
    /// encoding is `orderData` itself: six static words).
    function _witness(GaslessCrossChainOrder calldata order) private pure returns (bytes32) {
        return keccak256(
            abi.encode(
                _GASLESS_ORDER_TYPEHASH,
                order.originSettler,
                order.user,
                order.nonce,
                order.originChainId,
                order.openDeadline,
                order.fillDeadline,
                order.orderDataType,
                keccak256(abi.encodePacked(ORDER_DATA_TYPE, order.orderData))
            )
        );
    }

    function _markOpen(bytes32 orderId) private {
        if (_status[orderId] != OrderStatus.Unknown) revert OriginSettler_OrderExists(orderId);
        _status[orderId] = OrderStatus.Open;
    }

    /// @dev Tokens are sent at once (both are plain ERC-20s); ETH a payee refuses is kept for it (`withdrawOwed`), so
    /// that a payee cannot block its order's settlement or refund. The call gets at most `ethGas` and copies no return
    /// data, so that a payee can neither spend a batch's gas nor bloat its memory.
    function _pay(address payee, address token, uint256 amount, uint256 ethGas) private {
        if (token != address(0)) {
            IERC20(token).safeTransfer(payee, amount);
            return;
        }
        bool paid;
        // solhint-disable-next-line no-inline-assembly
        assembly ("memory-safe") {
            paid := call(ethGas, payee, amount, 0, 0, 0, 0)
        }
        if (!paid) {
            owed[payee] += amount;
            emit PaymentDeferred(payee, amount);
        }
    }
}
