// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title IPermit2SignatureTransfer
/// @notice The part of Uniswap's Permit2 (`ISignatureTransfer`, at 0x000000000022D473030F116dDEE9F6B43aC78BA3 on
/// Ethereum and as an OP-stack preinstall) that moves tokens on a signature carrying a witness: one signature both
/// allows the transfer and agrees to the witness's terms.
interface IPermit2SignatureTransfer {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom memory permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}
