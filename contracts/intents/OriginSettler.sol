// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IProvenOriginSettler, OriginData } from "@avn/contracts/interfaces/IIntentSettlers.sol";
import { IStorageProofVerifier } from "@avn/contracts/interfaces/IStorageProofVerifier.sol";
import { OriginSettlerBase } from "./OriginSettlerBase.sol";

/// @title OriginSettler
/// @notice See {IProvenOriginSettler}. Deployed on the L2; the L1 is the destination (fast withdrawals).
/// @dev No admin; the settings are immutable.
contract OriginSettler is OriginSettlerBase, IProvenOriginSettler {
    /// @dev `DestinationSettler.FILLS_SLOT`: the record of order `id` is at `keccak256(abi.encode(id, 0))`.
    uint256 private constant _FILLS_SLOT = 0;

    /// @inheritdoc IProvenOriginSettler
    IStorageProofVerifier public immutable VERIFIER;
    /// @inheritdoc IProvenOriginSettler
    uint256 public immutable MAX_PROOF_AGE;

    /// @notice The constructor's arguments.
    struct Settings {
        IStorageProofVerifier verifier;
        address destinationSettler;
        uint256 destinationChainId;
        address inputToken;
        address outputToken;
        address permit2;
        uint256 settlementWindow;
        uint256 maxProofAge;
    }

    /// @param settings The L1 side (destination settler, chain id, output token), the L2 side (verifier, input token,
    /// Permit2) and the timing (settlement window, maximum proof age in seconds).
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
        if (address(settings.verifier) == address(0)) revert OriginSettler_ZeroAddress();
        VERIFIER = settings.verifier;
        MAX_PROOF_AGE = settings.maxProofAge;
    }

    /// @inheritdoc IProvenOriginSettler
    function settle(bytes calldata originData, bytes calldata proof) external {
        bytes32 orderId = keccak256(originData);
        _requireOpen(orderId);
        OriginData memory data = abi.decode(originData, (OriginData));
        bytes32[] memory slots = new bytes32[](1);
        slots[0] = keccak256(abi.encode(orderId, _FILLS_SLOT));
        (bytes32[] memory values, uint256 l1BlockNumber) =
            VERIFIER.verifyStorage(DESTINATION_SETTLER, slots, MAX_PROOF_AGE, proof);
        uint256 record = uint256(values[0]);
        if (record == 0) revert OriginSettler_NotFilled(orderId, l1BlockNumber);
        address filler = address(uint160(record));
        emit Settled(orderId, filler, l1BlockNumber);
        _settleOpen(orderId, data, filler, gasleft());
    }
}
