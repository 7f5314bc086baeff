// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { AccessControlDefaultAdminRules } from
    "@openzeppelin/contracts/access/extensions/AccessControlDefaultAdminRules.sol";
import { IERC20 } from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import { SafeERC20 } from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import { IERC721Receiver } from "@openzeppelin/contracts/token/ERC721/IERC721Receiver.sol";
import { IERC721Enumerable } from "@openzeppelin/contracts/token/ERC721/extensions/IERC721Enumerable.sol";
import { ECDSA } from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import { EIP712 } from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import { Pausable } from "@openzeppelin/contracts/utils/Pausable.sol";
import { ReentrancyGuardTransient } from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";

import { IStakedToken } from "@avn/contracts/interfaces/IStakedToken.sol";
import { IMintableItem, IVoucherClaims } from "@avn/contracts/interfaces/IVoucherClaims.sol";

/// @title VoucherClaims
/// @notice See {IVoucherClaims}.
/// @dev A voucher is marked claimed before its item moves, and every claim runs under a transient
/// reentrancy guard, so neither an ERC-721 receiver hook nor a minting contract can claim twice. The
/// issuer's signature is checked with OpenZeppelin's ECDSA (65 bytes, low `s`), over an EIP-712 domain
/// that binds it to this contract on this chain. Rotating the issuer invalidates every voucher the old key
/// signed and nobody claimed: the credits service, which knows which those are, returns their credits.
contract VoucherClaims is AccessControlDefaultAdminRules, Pausable, ReentrancyGuardTransient, EIP712, IERC721Receiver, IVoucherClaims {
    using SafeERC20 for IERC20;

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVoucherClaims
    // The pinned EIP-712 type string, hashed at compile time (its length costs nothing at run time).
    bytes32 public constant VOUCHER_TYPEHASH =
        // solhint-disable-next-line gas-small-strings
        keccak256("Voucher(address recipient,uint256 itemId,uint256 amount,bytes32 voucherId,uint64 expiry)");

    /// @inheritdoc IVoucherClaims
    bytes32 public constant OPERATOR_ROLE = keccak256("OPERATOR_ROLE");

    /// @inheritdoc IVoucherClaims
    uint256 public constant MAX_TOKENS_PER_VOUCHER = 20;

    /*//////////////////////////////////////////////////////////////
                                STORAGE
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVoucherClaims
    address public issuer;

    mapping(uint256 itemId => Item item) internal _items;

    mapping(bytes32 voucherId => bool claimed) internal _claimed;

    /*//////////////////////////////////////////////////////////////
                              CONSTRUCTOR
    //////////////////////////////////////////////////////////////*/

    /// @param issuer_ The key that signs vouchers (the credits service's).
    /// @param operator The account that defines items, manages the inventory and may pause.
    /// @param admin The admin (rotates the issuer, unpauses, grants roles): a multisig or governance.
    /// @param adminTransferDelay The delay of the two-step admin transfer, in seconds.
    constructor(
        address issuer_,
        address operator,
        address admin,
        uint48 adminTransferDelay
    ) AccessControlDefaultAdminRules(adminTransferDelay, admin) EIP712("Verification Network Credits", "1") {
        if (operator == address(0)) revert VoucherClaims_ZeroAddress();
        _grantRole(OPERATOR_ROLE, operator);
        _setIssuer(issuer_);
    }

    /*//////////////////////////////////////////////////////////////
                           EXTERNAL FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVoucherClaims
    function claim(Voucher calldata voucher, bytes calldata signature) external whenNotPaused nonReentrant {
        if (msg.sender != voucher.recipient) revert VoucherClaims_NotRecipient(msg.sender, voucher.recipient);
        if (block.timestamp > voucher.expiry) revert VoucherClaims_Expired(voucher.expiry);
        if (_claimed[voucher.voucherId]) revert VoucherClaims_AlreadyClaimed(voucher.voucherId);
        (address signer, ECDSA.RecoverError error,) = ECDSA.tryRecoverCalldata(hashVoucher(voucher), signature);
        if (error != ECDSA.RecoverError.NoError || signer != issuer) revert VoucherClaims_InvalidSignature();
        Item memory item = _items[voucher.itemId];
        if (item.kind == ItemKind.None) revert VoucherClaims_UnknownItem(voucher.itemId);

        _claimed[voucher.voucherId] = true;
        emit VoucherClaimed(voucher.voucherId, voucher.recipient, voucher.itemId, voucher.amount);
        _deliver(item, voucher.recipient, voucher.amount);
    }

    /// @inheritdoc IVoucherClaims
    function setIssuer(address newIssuer) external onlyRole(DEFAULT_ADMIN_ROLE) {
        _setIssuer(newIssuer);
    }

    /// @inheritdoc IVoucherClaims
    function setItem(uint256 itemId, Item calldata item) external onlyRole(OPERATOR_ROLE) {
        if (item.kind == ItemKind.None || item.asset == address(0)) revert VoucherClaims_InvalidItem();
        // Once only: a voucher names its item by id, so an id pointed at another asset would pay its
        // outstanding vouchers in that asset. A new asset takes a new id.
        if (_items[itemId].kind != ItemKind.None) revert VoucherClaims_ItemDefined(itemId);
        _items[itemId] = item;
        emit ItemSet(itemId, item);
    }

    /// @inheritdoc IVoucherClaims
    function withdrawInventory(address asset, address to, uint256 amount) external onlyRole(OPERATOR_ROLE) {
        if (to == address(0)) revert VoucherClaims_ZeroAddress();
        IERC20(asset).safeTransfer(to, amount);
        emit InventoryWithdrawn(asset, to, amount);
    }

    /// @inheritdoc IVoucherClaims
    function withdrawNft(address asset, address to, uint256 tokenId) external onlyRole(OPERATOR_ROLE) nonReentrant {
        if (to == address(0)) revert VoucherClaims_ZeroAddress();
        IERC721Enumerable(asset).safeTransferFrom(address(this), to, tokenId);
        emit NftWithdrawn(asset, to, tokenId);
    }

    /// @inheritdoc IVoucherClaims
    function pause() external {
        if (!hasRole(OPERATOR_ROLE, msg.sender) && !hasRole(DEFAULT_ADMIN_ROLE, msg.sender)) {
            revert AccessControlUnauthorizedAccount(msg.sender, OPERATOR_ROLE);
        }
        _pause();
    }

    /// @inheritdoc IVoucherClaims
    function unpause() external onlyRole(DEFAULT_ADMIN_ROLE) {
        _unpause();
    }

    /// @inheritdoc IERC721Receiver
    /// @dev Accepts ERC-721 tokens sent with `safeTransferFrom`: the operator stocks the inventory so.
    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        return IERC721Receiver.onERC721Received.selector;
    }

    /*//////////////////////////////////////////////////////////////
                                 VIEWS
    //////////////////////////////////////////////////////////////*/

    /// @inheritdoc IVoucherClaims
    function itemOf(uint256 itemId) external view returns (Item memory) {
        return _items[itemId];
    }

    /// @inheritdoc IVoucherClaims
    function isClaimed(bytes32 voucherId) external view returns (bool) {
        return _claimed[voucherId];
    }

    /// @inheritdoc IVoucherClaims
    function hashVoucher(Voucher calldata voucher) public view returns (bytes32) {
        // Every field is a static type, so the struct's ABI encoding is its EIP-712 encoding.
        return _hashTypedDataV4(keccak256(abi.encode(VOUCHER_TYPEHASH, voucher)));
    }

    /*//////////////////////////////////////////////////////////////
                           PRIVATE FUNCTIONS
    //////////////////////////////////////////////////////////////*/

    function _deliver(Item memory item, address recipient, uint256 amount) private {
        if (amount == 0) revert VoucherClaims_InvalidAmount(amount);
        if (item.kind == ItemKind.Transfer) {
            IERC20(item.asset).safeTransfer(recipient, amount);
        } else if (item.kind == ItemKind.StakeFor) {
            // Staked tokens never move between ordinary accounts: they are made for the recipient from the
            // primary tokens held here.
            IStakedToken staked = IStakedToken(item.asset);
            IERC20(address(staked.PRIMARY_TOKEN())).forceApprove(item.asset, amount);
            staked.stakeFor(recipient, amount);
        } else {
            if (amount > MAX_TOKENS_PER_VOUCHER) revert VoucherClaims_InvalidAmount(amount);
            if (item.kind == ItemKind.Mint) {
                IMintableItem(item.asset).mintTo(recipient, amount);
            } else {
                // `transferFrom`, not `safeTransferFrom`: the recipient is the caller, who asked for the token,
                // and a contract wallet without a receiver hook can claim too (no callback runs either).
                IERC721Enumerable nft = IERC721Enumerable(item.asset);
                for (uint256 i = 0; i < amount; ++i) {
                    nft.transferFrom(address(this), recipient, nft.tokenOfOwnerByIndex(address(this), 0));
                }
            }
        }
    }

    function _setIssuer(address newIssuer) private {
        if (newIssuer == address(0)) revert VoucherClaims_ZeroAddress();
        address oldIssuer = issuer;
        issuer = newIssuer;
        emit IssuerUpdated(oldIssuer, newIssuer);
    }
}
