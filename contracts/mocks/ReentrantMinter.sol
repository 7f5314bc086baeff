// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IMintableItem, IVoucherClaims } from "@avn/contracts/interfaces/IVoucherClaims.sol";

/// @notice A hostile item contract for tests: when the claim platform asks it to mint, it tries to claim
/// another voucher (made out to itself) from inside that call, and records how the attempt ended.
contract ReentrantMinter is IMintableItem {
    IVoucherClaims public immutable CLAIMS;
    IVoucherClaims.Voucher internal _voucher;
    bytes internal _signature;
    bytes public reentryError;
    uint256 public minted;

    constructor(IVoucherClaims claims) {
        CLAIMS = claims;
    }

    /// @dev The voucher to claim from inside `mintTo`.
    function arm(IVoucherClaims.Voucher calldata voucher, bytes calldata signature) external {
        _voucher = voucher;
        _signature = signature;
    }

    function mintTo(address, uint256 quantity) external {
        try CLAIMS.claim(_voucher, _signature) {
            reentryError = "claimed";
        } catch (bytes memory reason) {
            reentryError = reason;
        }
        minted += quantity;
    }
}
