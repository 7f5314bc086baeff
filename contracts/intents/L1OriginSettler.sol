// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IMessagedOriginSettler, OriginData } from "@avn/contracts/interfaces/IIntentSettlers.sol";
import { OriginSettlerBase } from "./OriginSettlerBase.sol";

/// @dev The one function of the OP Stack's L1CrossDomainMessenger this contract reads.
interface ICrossDomainMessengerSender {
    function xDomainMessageSender() external view returns (address);
}

/// @title L1OriginSettler
/// @notice See {IMessagedOriginSettler}. Deployed on L1; the L2 is the destination (fast deposits).
/// @dev No admin; the settings are immutable. A report is relayed by the messenger, which marks a reverted relay
/// as failed and lets anyone replay it: so a report never reverts for one order's sake (an order no longer open is
/// skipped, an ETH payment a filler refuses is kept for it), only for a caller that is not the destination.
contract L1OriginSettler is OriginSettlerBase, IMessagedOriginSettler {
    /// @inheritdoc IMessagedOriginSettler
    uint256 public constant PAYMENT_GAS = 50_000;

    /// @inheritdoc IMessagedOriginSettler
    address public immutable MESSENGER;

    /// @notice The constructor's arguments.
    struct Settings {
        address messenger;
        address destinationSettler;
        uint256 destinationChainId;
        address inputToken;
        address outputToken;
        address permit2;
        uint256 settlementWindow;
    }

    /// @param settings The L1 messenger, the L2 side (destination settler, chain id, output token), this chain's
    /// input token and Permit2, and the settlement window in seconds (longer than the L2's challenge period).
    constructor(Settings memory settings)
        OriginSettlerBase(
            settings.destinationSettler,
            settings.destinationChainId,
            settings.inputToken,
            settings.outputToken,
            settings.permit2,
            settings.settlementWindow
        )
    {
        if (settings.messenger == address(0)) revert OriginSettler_ZeroAddress();
        MESSENGER = settings.messenger;
    }

    /// @inheritdoc IMessagedOriginSettler
    function settleReported(bytes[] calldata originDatas, address[] calldata repayTos) external {
        if (msg.sender != MESSENGER) revert OriginSettler_NotFromDestination(msg.sender);
        address sender = ICrossDomainMessengerSender(MESSENGER).xDomainMessageSender();
        if (sender != DESTINATION_SETTLER) revert OriginSettler_NotFromDestination(sender);
        if (originDatas.length != repayTos.length) revert OriginSettler_MalformedReport();
        for (uint256 i = 0; i < originDatas.length; ++i) {
            bytes32 orderId = keccak256(originDatas[i]);
            OrderStatus status = _statusOf(orderId);
            if (status != OrderStatus.Open) {
                emit ReportSkipped(orderId, status);
                continue;
            }
            OriginData memory data = abi.decode(originDatas[i], (OriginData));
            emit SettledByMessage(orderId, repayTos[i]);
            _settleOpen(orderId, data, repayTos[i], PAYMENT_GAS);
        }
    }
}
