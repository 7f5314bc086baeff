// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title IVoucherClaims
/// @notice The claim platform of the credits channel. Buyers pay for credits with ordinary payment methods
/// off-chain; the credits service debits them when they redeem an item of its catalogue and returns an
/// EIP-712 voucher signed by the issuer key. The voucher's recipient presents it here, once, before its
/// expiry, and receives the item: ERC-20 tokens from an inventory the operator funded, staked tokens staked
/// for it from an inventory of primary tokens, ERC-721 tokens from an inventory, or items minted by an
/// asset contract that grants this contract the right.
interface IVoucherClaims {
    /// @notice How an item is delivered.
    /// @dev `Transfer`: `amount` base units of the ERC-20 `asset` from this contract's balance.
    /// `StakeFor`: `amount` primary tokens from this contract's balance, staked for the recipient on the
    /// staked token `asset`. `NftInventory`: `amount` tokens of the enumerable ERC-721 `asset` that this
    /// contract holds. `Mint`: `asset.mintTo(recipient, amount)` (see IMintableItem).
    enum ItemKind {
        None,
        Transfer,
        StakeFor,
        NftInventory,
        Mint
    }

    /// @notice An item of the catalogue, as the chain knows it (prices are off-chain, in credits).
    struct Item {
        ItemKind kind;
        address asset;
    }

    /// @notice What the issuer signs (pinned: the credits service and outside tools rely on these names).
    /// @param recipient The only account that may claim it.
    /// @param itemId The catalogue item.
    /// @param amount Base units (ERC-20 and staked tokens) or a count (ERC-721 tokens and minted items).
    /// @param voucherId Unique: a voucher is claimed at most once.
    /// @param expiry The last second (block time) it may be claimed.
    // Never stored (calldata only), so packing plays no part; the field order is the EIP-712 type's.
    // solhint-disable-next-line gas-struct-packing
    struct Voucher {
        address recipient;
        uint256 itemId;
        uint256 amount;
        bytes32 voucherId;
        uint64 expiry;
    }

    /// @notice Emitted when `recipient` claims voucher `voucherId` for `amount` of item `itemId`.
    event VoucherClaimed(bytes32 indexed voucherId, address indexed recipient, uint256 indexed itemId, uint256 amount);

    /// @notice Emitted when the admin replaces the issuer key (vouchers of the old key stop being valid).
    event IssuerUpdated(address oldIssuer, address newIssuer);

    /// @notice Emitted when the operator defines item `itemId` (once: it never changes after).
    event ItemSet(uint256 indexed itemId, Item item);

    /// @notice Emitted when the operator takes ERC-20 inventory back.
    event InventoryWithdrawn(address indexed asset, address indexed to, uint256 amount);

    /// @notice Emitted when the operator takes an ERC-721 token of the inventory back.
    event NftWithdrawn(address indexed asset, address indexed to, uint256 tokenId);

    /// @notice Thrown when an address that must be set is zero.
    error VoucherClaims_ZeroAddress();

    /// @notice Thrown when anyone but the voucher's recipient presents it.
    error VoucherClaims_NotRecipient(address caller, address recipient);

    /// @notice Thrown when the voucher's expiry has passed.
    error VoucherClaims_Expired(uint64 expiry);

    /// @notice Thrown when the voucher was claimed already.
    error VoucherClaims_AlreadyClaimed(bytes32 voucherId);

    /// @notice Thrown when the signature is malformed or malleable, or was not made by the current issuer
    /// over this voucher for this contract on this chain.
    error VoucherClaims_InvalidSignature();

    /// @notice Thrown when the voucher names an item the catalogue does not define.
    error VoucherClaims_UnknownItem(uint256 itemId);

    /// @notice Thrown when a voucher's amount is zero, or its count of tokens above `MAX_TOKENS_PER_VOUCHER`.
    error VoucherClaims_InvalidAmount(uint256 amount);

    /// @notice Thrown when an item is defined without a kind or an asset.
    error VoucherClaims_InvalidItem();

    /// @notice Thrown when an item id is defined a second time (vouchers name items by id).
    error VoucherClaims_ItemDefined(uint256 itemId);

    /// @notice The EIP-712 type hash of `Voucher`.
    function VOUCHER_TYPEHASH() external view returns (bytes32);

    /// @notice The role of the operator: defines items, takes inventory back, pauses claims.
    function OPERATOR_ROLE() external view returns (bytes32);

    /// @notice The most ERC-721 tokens or minted items one voucher may carry (bounds the delivery loop).
    function MAX_TOKENS_PER_VOUCHER() external view returns (uint256);

    /// @notice The key whose signature makes a voucher valid.
    function issuer() external view returns (address);

    /// @notice Item `itemId` (kind `None` if undefined).
    function itemOf(uint256 itemId) external view returns (Item memory);

    /// @notice Whether voucher `voucherId` was claimed.
    function isClaimed(bytes32 voucherId) external view returns (bool);

    /// @notice The EIP-712 digest the issuer signs for `voucher`.
    function hashVoucher(Voucher calldata voucher) external view returns (bytes32);

    /// @notice Delivers the voucher's item to the caller, who must be its recipient; once per voucher,
    /// before its expiry, while claims are not paused.
    function claim(Voucher calldata voucher, bytes calldata signature) external;

    /// @notice Admin: replaces the issuer key.
    function setIssuer(address newIssuer) external;

    /// @notice Operator: defines item `itemId`, once (a voucher's item id always means the same asset).
    function setItem(uint256 itemId, Item calldata item) external;

    /// @notice Operator: sends `amount` of the ERC-20 `asset` held here to `to`.
    function withdrawInventory(address asset, address to, uint256 amount) external;

    /// @notice Operator: sends ERC-721 token `tokenId` of `asset` held here to `to`.
    function withdrawNft(address asset, address to, uint256 tokenId) external;

    /// @notice Operator or admin: stops every claim (a leaked issuer key, say).
    function pause() external;

    /// @notice Admin: lets claims go on.
    function unpause() external;
}

/// @title IMintableItem
/// @notice An asset contract that mints items to a voucher's recipient for the claim platform it trusts.
interface IMintableItem {
    /// @notice Mints `quantity` items to `to`. Callable only by the minter the asset contract names.
    function mintTo(address to, uint256 quantity) external;
}
