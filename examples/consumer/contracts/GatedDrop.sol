// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import { AttestationConsumer } from "@avn/contracts/AttestationConsumer.sol";
import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";

/// @title GatedDrop
/// @notice One drop per wallet for holders of at least `MIN_BALANCE` of `TOKEN` on Ethereum, claimed in one
/// transaction with a balance attestation that the Asset Verification Network's nodes signed: no job, no fee,
/// no oracle callback. `AttestationConsumer` checks that the attestation is about the caller, this token and
/// chain, at least the minimum, signed by the current quorum of live licensed nodes, and at most
/// `MAX_ATTESTATION_AGE` seconds old.
contract GatedDrop is AttestationConsumer {
    /// @notice The token whose holders may claim (an ERC-20 or ERC-721 on Ethereum).
    address public immutable TOKEN;

    /// @notice The least balance of `TOKEN` that earns a drop, in the token's smallest unit.
    uint256 public immutable MIN_BALANCE;

    /// @notice Whether a wallet has claimed its drop.
    mapping(address holder => bool) public claimed;

    /// @notice Emitted when `holder` claims its drop with an attested `balance`.
    event Claimed(address indexed holder, uint256 balance);

    /// @notice Thrown when `holder` has claimed already.
    error GatedDrop_AlreadyClaimed(address holder);

    constructor(IAttestationVerifier verifier, uint256 maxAttestationAge, address token, uint256 minBalance)
        AttestationConsumer(verifier, maxAttestationAge)
    {
        TOKEN = token;
        MIN_BALANCE = minBalance;
    }

    /// @notice Claims the caller's drop with an attestation of its balance of `TOKEN` (from
    /// `POST /api/ccq-evm?attest=true`, turned into these arguments by the SDK's `toContractAttestation`).
    function claim(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external {
        if (claimed[msg.sender]) revert GatedDrop_AlreadyClaimed(msg.sender);
        _requireEvmHolding(attestation, signatures, msg.sender, TOKEN, MIN_BALANCE);
        claimed[msg.sender] = true;
        emit Claimed(msg.sender, attestation.balance);
    }
}
