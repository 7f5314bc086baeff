// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IMessagedOriginSettler, IReportingDestinationSettler, OriginData } from "@avn/contracts/interfaces/IIntentSettlers.sol";
import { DestinationSettler } from "./DestinationSettler.sol";

/// @dev The one function of the OP Stack's L2CrossDomainMessenger this contract calls.
interface IL2CrossDomainMessenger {
    function sendMessage(address target, bytes calldata message, uint32 minGasLimit) external payable;
}

/// @title L2DestinationSettler
/// @notice See {IReportingDestinationSettler}. Deployed on the L2; the origin settler on L1 is paid its reports.
/// @dev Adds no state (the fill records stay at `FILLS_SLOT`) and no admin. A report needs no trust in its caller: it
/// carries only what `fill` recorded, and the origin settler pays each order once.
contract L2DestinationSettler is DestinationSettler, IReportingDestinationSettler {
    /// @inheritdoc IReportingDestinationSettler
    uint256 public constant MAX_REPORT = 50;

    /// @dev L1 gas of a report's relay: the call, and per order its decoding, its status, the event and a payment (a
    /// token transfer to a new holder, or ETH with `PAYMENT_GAS` to a new account), with a margin.
    uint256 private constant _REPORT_BASE_GAS = 100_000;
    uint256 private constant _REPORT_GAS_PER_ORDER = 100_000;

    /// @inheritdoc IReportingDestinationSettler
    address public immutable MESSENGER;

    /// @param messenger The L2 cross-domain messenger (the predeploy 0x4200…0007).
    constructor(address messenger) {
        if (messenger == address(0)) revert DestinationSettler_ZeroAddress();
        MESSENGER = messenger;
    }

    /// @inheritdoc IReportingDestinationSettler
    function reportFills(bytes[] calldata originDatas) external {
        uint256 count = originDatas.length;
        if (count == 0 || count > MAX_REPORT) revert DestinationSettler_BadReportSize(count);
        address[] memory repayTos = new address[](count);
        address originSettler;
        for (uint256 i = 0; i < count; ++i) {
            bytes32 orderId = keccak256(originDatas[i]);
            uint256 record = _fills[orderId];
            if (record == 0) revert DestinationSettler_NotFilled(orderId);
            repayTos[i] = address(uint160(record));
            // A recorded fill's originData was decoded and checked by `fill`: it is well formed.
            address settler = abi.decode(originDatas[i], (OriginData)).originSettler;
            if (i == 0) originSettler = settler;
            else if (settler != originSettler) revert DestinationSettler_MixedOrigins(originSettler, settler);
        }
        emit FillsReported(originSettler, count);
        IL2CrossDomainMessenger(MESSENGER).sendMessage(
            originSettler, abi.encodeCall(IMessagedOriginSettler.settleReported, (originDatas, repayTos)), reportGasLimit(count)
        );
    }

    /// @inheritdoc IReportingDestinationSettler
    function reportGasLimit(uint256 count) public pure returns (uint32) {
        if (count > MAX_REPORT) revert DestinationSettler_BadReportSize(count);
        return uint32(_REPORT_BASE_GAS + count * _REPORT_GAS_PER_ORDER);
    }
}
