// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import { ERC721 } from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";
import { IStorageProofVerifier } from "@avn/contracts/interfaces/IStorageProofVerifier.sol";
import { IVerificationRegistry } from "@avn/contracts/interfaces/IVerificationRegistry.sol";
import { IMintableItem } from "@avn/contracts/interfaces/IVoucherClaims.sol";

/// @title GameItem (example integration)
/// @notice A game item that only verified holders can claim, in any of the network's three ways. The job path:
/// a player asks for a check (`requestVerification`), this contract opens a verification job for the player's
/// wallet and `REQUIRED_ASSET` on Ethereum, paying the job fee from its own collateral in the registry, and
/// once circuit nodes have finalized it, a player holding at least `MIN_BALANCE` claims one item (`claim`).
/// The attested path: the player fetches a quorum-signed attestation of its balance from the API
/// (`?attest=true`) and claims with it in one transaction (`claimWithAttestation`), which the verifier checks
/// in a view call. The condition path, when the game names a condition (`CONDITION_HASH`): the player fetches
/// a quorum-signed verdict that its wallet, together with the Solana owner it linked (if any), meets the
/// condition over both chains, and claims with it (`claimWithCondition`), again checked in a view call. Items
/// can also be bought: the credits channel's claim platform (`MINTER`) mints them to the holders of its
/// vouchers (`mintTo`). The proof path, when the game names a storage proof verifier (`PROOF_VERIFIER`): the
/// player sends a Merkle proof of its balance slot in `REQUIRED_ASSET` against an L1 block hash the L2 knows
/// (`claimWithProof`), trusting no node at all.
/// @dev The example reads the result of the player's own job (`getResult`), so no one else's older job
/// can stand in for it, and requires it to be fresh (`MAX_RESULT_AGE`). Each open job costs the game a
/// fee; a player has at most one open job at a time. A real game would also charge or gate requests, since
/// fresh addresses cost nothing. A Solana owner may link itself to many Ethereum addresses, so its holdings
/// earn one item by the condition path, whichever address claims (`solanaOwnerClaimed`).
contract GameItem is ERC721, IMintableItem {
    /// @notice The verification registry jobs are opened in (this contract must hold collateral there).
    IVerificationRegistry public immutable REGISTRY;

    /// @notice The attestation verifier that checks attested and condition claims.
    IAttestationVerifier public immutable VERIFIER;

    /// @notice The ERC-20 or ERC-721 on Ethereum that players must hold.
    address public immutable REQUIRED_ASSET;

    /// @notice The smallest balance of `REQUIRED_ASSET` that earns an item.
    uint256 public immutable MIN_BALANCE;

    /// @notice How long after its finalization a verification result may be used to claim, in seconds.
    uint256 public immutable MAX_RESULT_AGE;

    /// @notice The claim platform that may mint bought items (zero: none).
    address public immutable MINTER;

    /// @notice The condition a quorum-signed verdict must be about for `claimWithCondition` (zero: condition
    /// claims are off).
    bytes32 public immutable CONDITION_HASH;

    /// @notice The storage proof verifier that checks proof claims (zero: proof claims are off).
    IStorageProofVerifier public immutable PROOF_VERIFIER;

    /// @notice The storage slot of `REQUIRED_ASSET`'s balances mapping that a proof claim must prove. Fixed by
    /// the game, not chosen by the player: any other `mapping(address => uint256)` of the token (nonces, an
    /// ERC20Votes delegatee read as a number) would otherwise pass for a balance.
    uint256 public immutable PROOF_BALANCES_SLOT;

    /// @notice The player's latest verification job (0 = none yet).
    mapping(address player => uint256 jobId) public jobOf;

    /// @notice Whether the player has claimed its item.
    mapping(address player => bool done) public hasClaimed;

    /// @notice Whether the Solana owner's holdings already earned an item by the condition path.
    mapping(bytes32 solanaOwner => bool used) public solanaOwnerClaimed;

    uint256 private _nextTokenId = 1;

    /// @notice Emitted when a player's verification job is opened.
    event VerificationOpened(address indexed player, uint256 indexed jobId);

    /// @notice Emitted when a player claims its item.
    event ItemClaimed(address indexed player, uint256 indexed tokenId, uint256 verifiedBalance);

    /// @notice Emitted when a player claims its item on a condition verdict, with the linked Solana owner whose
    /// holdings counted (zero: none).
    event ItemClaimedWithCondition(address indexed player, uint256 indexed tokenId, bytes32 indexed solanaOwner);

    /// @notice Emitted when the minter mints a bought item to `buyer`.
    event ItemMinted(address indexed buyer, uint256 indexed tokenId);

    /// @notice Thrown when a constructor argument is zero.
    error GameItem_ZeroArgument();

    /// @notice Thrown when anyone but `MINTER` mints bought items.
    error GameItem_NotMinter(address caller);

    /// @notice Thrown when the player already claimed its item.
    error GameItem_AlreadyClaimed(address player);

    /// @notice Thrown when the player's last job is still open.
    error GameItem_VerificationPending(address player, uint256 jobId);

    /// @notice Thrown when the player has no finalized verification job.
    error GameItem_NotVerified(address player);

    /// @notice Thrown when the player's verification result is older than `MAX_RESULT_AGE`.
    error GameItem_ResultTooOld(uint256 finalizedAt, uint256 maxAge);

    /// @notice Thrown when an attestation is not about the caller's balance of `REQUIRED_ASSET` on Ethereum.
    error GameItem_WrongAttestation();

    /// @notice Thrown when the verified balance is below `MIN_BALANCE`.
    error GameItem_BalanceTooLow(uint256 balance, uint256 minBalance);

    /// @notice Thrown when a condition claim is made on a game without a condition (`CONDITION_HASH` zero).
    error GameItem_ConditionClaimsOff();

    /// @notice Thrown when a condition verdict is about another condition than `CONDITION_HASH`.
    error GameItem_WrongCondition(bytes32 conditionHash);

    /// @notice Thrown when a condition verdict is about other owners than the caller and the Solana owner it names.
    error GameItem_WrongOwners(bytes32 ownersHash);

    /// @notice Thrown when a condition verdict says the owners do not meet the condition.
    error GameItem_ConditionNotMet();

    /// @notice Thrown when the Solana owner's holdings already earned an item (claimed from any address).
    error GameItem_SolanaOwnerClaimed(bytes32 solanaOwner);

    /// @notice Thrown when a proof claim is made on a game without a proof verifier (`PROOF_VERIFIER` zero).
    error GameItem_ProofClaimsOff();

    /// @notice Thrown when a proof claim names another balances slot than `PROOF_BALANCES_SLOT`.
    error GameItem_WrongBalancesSlot(uint256 balancesSlot, uint256 expected);

    /// @param verifier The attestation verifier (the verification registry is its `REGISTRY`).
    /// @param requiredAsset The ERC-20 or ERC-721 on Ethereum that players must hold.
    /// @param minBalance The smallest balance that earns an item.
    /// @param maxResultAge How long a finalized result or an attestation may be used to claim, in seconds.
    /// @param minter The claim platform that may mint bought items (zero: items cannot be bought).
    /// @param conditionHash The condition a verdict must be about to claim by it (zero: condition claims are off).
    /// @param proofVerifier The storage proof verifier of proof claims (zero: proof claims are off).
    /// @param proofBalancesSlot The storage slot of `requiredAsset`'s balances mapping (OpenZeppelin's ERC-20: 0,
    /// ERC-721: 3); unused when `proofVerifier` is zero.
    constructor(
        IAttestationVerifier verifier,
        address requiredAsset,
        uint256 minBalance,
        uint256 maxResultAge,
        address minter,
        bytes32 conditionHash,
        IStorageProofVerifier proofVerifier,
        uint256 proofBalancesSlot
    ) ERC721("Verified Holder Item", "ITEM") {
        if (address(verifier) == address(0) || requiredAsset == address(0) || minBalance == 0 || maxResultAge == 0) {
            revert GameItem_ZeroArgument();
        }
        VERIFIER = verifier;
        REGISTRY = verifier.REGISTRY();
        REQUIRED_ASSET = requiredAsset;
        MIN_BALANCE = minBalance;
        MAX_RESULT_AGE = maxResultAge;
        MINTER = minter;
        CONDITION_HASH = conditionHash;
        PROOF_VERIFIER = proofVerifier;
        PROOF_BALANCES_SLOT = proofBalancesSlot;
    }

    /// @inheritdoc IMintableItem
    /// @dev A bought item does not count as the player's verified claim: a buyer may still claim one.
    function mintTo(address to, uint256 quantity) external {
        // With no minter (zero), no caller matches: nothing can be minted.
        if (msg.sender != MINTER) revert GameItem_NotMinter(msg.sender);
        for (uint256 i = 0; i < quantity; ++i) {
            uint256 tokenId = _nextTokenId++;
            // _mint, not _safeMint: no callback into the buyer, so nothing can re-enter the minter.
            _mint(to, tokenId);
            emit ItemMinted(to, tokenId);
        }
    }

    /// @notice Opens a verification job for the caller's balance of `REQUIRED_ASSET` on Ethereum.
    /// @return jobId The job's id; claim once it is finalized.
    function requestVerification() external returns (uint256 jobId) {
        if (hasClaimed[msg.sender]) revert GameItem_AlreadyClaimed(msg.sender);
        uint256 previous = jobOf[msg.sender];
        if (previous != 0) {
            if (REGISTRY.getResult(previous).status == IVerificationRegistry.JobStatus.Open) {
                revert GameItem_VerificationPending(msg.sender, previous);
            }
        }
        jobId = REGISTRY.requestEvmBalance(msg.sender, REQUIRED_ASSET);
        jobOf[msg.sender] = jobId;
        emit VerificationOpened(msg.sender, jobId);
    }

    /// @notice Mints the caller's item if its latest job finalized recently with a balance of at least
    /// `MIN_BALANCE`.
    /// @return tokenId The item minted.
    function claim() external returns (uint256 tokenId) {
        if (hasClaimed[msg.sender]) revert GameItem_AlreadyClaimed(msg.sender);
        uint256 jobId = jobOf[msg.sender];
        if (jobId == 0) revert GameItem_NotVerified(msg.sender);
        IVerificationRegistry.Result memory result = REGISTRY.getResult(jobId);
        if (result.status == IVerificationRegistry.JobStatus.Open) revert GameItem_VerificationPending(msg.sender, jobId);
        if (result.status != IVerificationRegistry.JobStatus.Finalized) revert GameItem_NotVerified(msg.sender);
        if (block.timestamp - result.finalizedAt > MAX_RESULT_AGE) {
            revert GameItem_ResultTooOld(result.finalizedAt, MAX_RESULT_AGE);
        }
        tokenId = _mintItem(result.balance);
    }

    /// @notice Mints the caller's item on a quorum-signed attestation, at most `MAX_RESULT_AGE` old, that
    /// the caller holds at least `MIN_BALANCE` of `REQUIRED_ASSET` on Ethereum. Costs the game nothing: the
    /// check is a view call (the API's key paid for the answer). Reverts with the verifier's reason when
    /// the attestation is not valid.
    /// @return tokenId The item minted.
    function claimWithAttestation(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external returns (uint256 tokenId) {
        if (hasClaimed[msg.sender]) revert GameItem_AlreadyClaimed(msg.sender);
        if (
            attestation.chain != 0 || attestation.owner != bytes32(uint256(uint160(msg.sender)))
                || attestation.asset != bytes32(uint256(uint160(REQUIRED_ASSET)))
        ) revert GameItem_WrongAttestation();
        VERIFIER.checkAttestation(attestation, signatures, MAX_RESULT_AGE);
        tokenId = _mintItem(attestation.balance);
    }

    /// @notice Mints the caller's item on a quorum-signed verdict, at most `MAX_RESULT_AGE` old, that the
    /// caller together with `solanaOwner` meets `CONDITION_HASH`. Costs the game nothing: the check is a view
    /// call. Reverts with the verifier's reason when the attestation is not valid.
    /// @param solanaOwner The Solana owner linked to the caller whose holdings the verdict counts (zero: none);
    /// its holdings earn one item, whichever address claims with them.
    /// @return tokenId The item minted.
    function claimWithCondition(
        IAttestationVerifier.ConditionAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures,
        bytes32 solanaOwner
    ) external returns (uint256 tokenId) {
        if (CONDITION_HASH == bytes32(0)) revert GameItem_ConditionClaimsOff();
        if (hasClaimed[msg.sender]) revert GameItem_AlreadyClaimed(msg.sender);
        if (attestation.conditionHash != CONDITION_HASH) revert GameItem_WrongCondition(attestation.conditionHash);
        // The verdict must name the caller itself: anyone else's verdict, or the caller's with another Solana
        // owner, proves nothing about what this claim spends.
        if (attestation.ownersHash != _ownersHash(msg.sender, solanaOwner)) {
            revert GameItem_WrongOwners(attestation.ownersHash);
        }
        // Reading the calldata bool reverts on a word above 1 (which no quorum signs anyway).
        if (!attestation.verdict) revert GameItem_ConditionNotMet();
        // Zero is "no Solana owner", which every wallet-only claim shares: it is never marked.
        if (solanaOwner != bytes32(0)) {
            if (solanaOwnerClaimed[solanaOwner]) revert GameItem_SolanaOwnerClaimed(solanaOwner);
            solanaOwnerClaimed[solanaOwner] = true;
        }
        VERIFIER.checkConditionAttestation(attestation, signatures, MAX_RESULT_AGE);
        tokenId = _mintClaimed();
        emit ItemClaimedWithCondition(msg.sender, tokenId, solanaOwner);
    }

    /// @notice Mints the caller's item on a Merkle proof, against an L1 block at most `MAX_RESULT_AGE` old, that
    /// the caller holds at least `MIN_BALANCE` of `REQUIRED_ASSET` on L1. Costs the game nothing and trusts no
    /// node: the verifier checks the proof against an L1 block hash the L2 knows. Reverts with the verifier's
    /// reason when the proof is not valid.
    /// @param balancesSlot The balances slot the proof was built for: must be `PROOF_BALANCES_SLOT` (stated by
    /// the caller so that a proof of another slot fails with a clear error).
    /// @param proof `abi.encode(IStorageProofVerifier.BalanceProof)` of the caller's balance slot.
    /// @return tokenId The item minted.
    function claimWithProof(uint256 balancesSlot, bytes calldata proof) external returns (uint256 tokenId) {
        if (address(PROOF_VERIFIER) == address(0)) revert GameItem_ProofClaimsOff();
        if (hasClaimed[msg.sender]) revert GameItem_AlreadyClaimed(msg.sender);
        if (balancesSlot != PROOF_BALANCES_SLOT) revert GameItem_WrongBalancesSlot(balancesSlot, PROOF_BALANCES_SLOT);
        // The verifier derives the storage key from `msg.sender`: another player's proof proves another key.
        (uint256 balance,) =
            PROOF_VERIFIER.verifyBalance(REQUIRED_ASSET, msg.sender, PROOF_BALANCES_SLOT, MAX_RESULT_AGE, proof);
        tokenId = _mintItem(balance);
    }

    /// @dev The owners hash a verdict about `player` and `solanaOwner` names (the protocol's `ownersHash`).
    function _ownersHash(address player, bytes32 solanaOwner) private pure returns (bytes32) {
        return keccak256(abi.encode(bytes32(uint256(uint160(player))), solanaOwner));
    }

    /// @dev Mints the caller's verified item for a balance of at least `MIN_BALANCE` (job, attested and proof
    /// paths).
    function _mintItem(uint256 balance) private returns (uint256 tokenId) {
        if (balance < MIN_BALANCE) revert GameItem_BalanceTooLow(balance, MIN_BALANCE);
        tokenId = _mintClaimed();
        emit ItemClaimed(msg.sender, tokenId, balance);
    }

    /// @dev Marks the caller's claim and mints its item: every verified path ends here, so a player claims once.
    function _mintClaimed() private returns (uint256 tokenId) {
        hasClaimed[msg.sender] = true;
        tokenId = _nextTokenId++;
        // _mint, not _safeMint: no callback into the player, so nothing can re-enter.
        _mint(msg.sender, tokenId);
    }
}
