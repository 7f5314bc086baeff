// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { SafeERC20 } from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import { IIntentDestinationSettler, OriginData } from "@avn/contracts/interfaces/IIntentSettlers.sol";

/// @title DestinationSettler
/// @notice See {IIntentDestinationSettler}. Deployed on L1, where the origin settler on the L2 proves its storage;
/// `L2DestinationSettler` extends it for the L2.
/// @dev The layout is part of the interface: `_fills` must stay the first state variable (slot `FILLS_SLOT`), and the
/// contract has no parent with state and is not upgradeable, so the slot can never move under the L2's proofs (a
/// child adds no state). It holds no funds: a fill moves the output from the filler to the recipient in the same
/// call. It has no admin.
contract DestinationSettler is IIntentDestinationSettler {
    using SafeERC20 for IERC20;

    /// @inheritdoc IIntentDestinationSettler
    uint256 public constant FILLS_SLOT = 0;

    /// @dev orderId => repayTo in bits 0-159, the fill's timestamp in bits 160-223. Slot `FILLS_SLOT`.
    mapping(bytes32 orderId => uint256 record) internal _fills;

    /// @notice Pays the order's output to its recipient from the caller (ETH as `msg.value`, a token through an
    /// allowance given to this contract), and records who is repaid on the origin chain.
    /// @dev `fillerData` is empty (repay the caller) or `abi.encode(address repayTo)`: a filler whose address differs
    /// across chains (a contract wallet) names the one it controls on the origin chain.
    function fill(bytes32 orderId, bytes calldata originData, bytes calldata fillerData) external payable {
        bytes32 originDataHash = keccak256(originData);
        if (originDataHash != orderId) revert DestinationSettler_WrongOrderId(orderId, originDataHash);
        OriginData memory order = abi.decode(originData, (OriginData));
        if (order.destinationChainId != block.chainid || order.destinationSettler != address(this)) {
            revert DestinationSettler_WrongDestination(order.destinationChainId, order.destinationSettler);
        }
        if (block.timestamp > order.fillDeadline) revert DestinationSettler_FillExpired(orderId, order.fillDeadline);
        uint256 existing = _fills[orderId];
        if (existing != 0) revert DestinationSettler_AlreadyFilled(orderId, address(uint160(existing)));
        address repayTo = _repayTo(fillerData);

        // Recorded before paying, so a recipient that calls back finds the order filled.
        _fills[orderId] = uint256(uint160(repayTo)) | (block.timestamp << 160);
        emit Filled(orderId, msg.sender, repayTo, order.recipient);
        _pay(order);
    }

    /// @inheritdoc IIntentDestinationSettler
    function fills(bytes32 orderId) external view returns (address repayTo, uint64 filledAt) {
        uint256 record = _fills[orderId];
        return (address(uint160(record)), uint64(record >> 160));
    }

    /// @inheritdoc IIntentDestinationSettler
    function fillSlot(bytes32 orderId) external pure returns (bytes32) {
        return keccak256(abi.encode(orderId, FILLS_SLOT));
    }

    function _repayTo(bytes calldata fillerData) private view returns (address repayTo) {
        if (fillerData.length == 0) return msg.sender;
        if (fillerData.length != 32) revert DestinationSettler_BadFillerData();
        uint256 word = uint256(bytes32(fillerData));
        if (word == 0 || word >> 160 != 0) revert DestinationSettler_BadFillerData();
        return address(uint160(word));
    }

    function _pay(OriginData memory order) private {
        if (order.outputToken == address(0)) {
            if (msg.value != order.outputAmount) revert DestinationSettler_WrongValue(msg.value, order.outputAmount);
            (bool paid,) = order.recipient.call{ value: msg.value }("");
            if (!paid) revert DestinationSettler_PaymentFailed(order.recipient);
        } else {
            if (msg.value != 0) revert DestinationSettler_WrongValue(msg.value, 0);
            IERC20(order.outputToken).safeTransferFrom(msg.sender, order.recipient, order.outputAmount);
        }
    }
}
