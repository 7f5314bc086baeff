// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { IEAS, AttestationRequest, AttestationRequestData } from "@ethereum-attestation-service/eas-contracts/contracts/IEAS.sol";
import { Attestation } from "@ethereum-attestation-service/eas-contracts/contracts/Common.sol";
import { ISchemaRegistry } from "@ethereum-attestation-service/eas-contracts/contracts/ISchemaRegistry.sol";
import { SchemaResolver } from "@ethereum-attestation-service/eas-contracts/contracts/resolver/SchemaResolver.sol";
import { ISchemaResolver } from "@ethereum-attestation-service/eas-contracts/contracts/resolver/ISchemaResolver.sol";

import { IAttestationExporter } from "@avn/contracts/interfaces/IAttestationExporter.sol";
import { IAttestationVerifier } from "@avn/contracts/interfaces/IAttestationVerifier.sol";

/// @title AttestationExporter
/// @notice See {IAttestationExporter}.
/// @dev The attester of every attestation of its two schemas and their resolver: EAS asks the schema's resolver
/// before it stores an attestation, and this one accepts only its own, so an attestation of our schemas is
/// always one the verifier passed. It holds no privilege and no admin: the verifier it checks with and the
/// schemas it registered are fixed at construction. The only state it writes is each exported answer's UID.
contract AttestationExporter is SchemaResolver, IAttestationExporter {
    /// @inheritdoc IAttestationExporter
    // The fields of the pinned EIP-712 struct, so that EAS's readers decode `data` with the signed names.
    // solhint-disable-next-line gas-small-strings
    string public constant BALANCE_SCHEMA =
        "uint8 chain,bytes32 owner,bytes32 asset,uint256 balance,bytes32 queryResultHash,uint64 sourceBlock,uint64 issuedAt";

    /// @inheritdoc IAttestationExporter
    // solhint-disable-next-line gas-small-strings
    string public constant CONDITION_SCHEMA =
        "bytes32 conditionHash,bytes32 ownersHash,bool verdict,uint64 ethereumBlock,uint64 solanaSlot,uint64 issuedAt";

    /// @inheritdoc IAttestationExporter
    uint256 public constant MAX_EXPORT_AGE = 1 hours;

    /// @dev `BalanceAttestation`'s chain number for Ethereum, whose owner is an address.
    uint8 private constant _ETHEREUM = 0;

    /// @inheritdoc IAttestationExporter
    IAttestationVerifier public immutable VERIFIER;

    /// @inheritdoc IAttestationExporter
    // The resolver base keeps it too (`_eas`, internal): this is its public face, as an address.
    address public immutable EAS;

    /// @inheritdoc IAttestationExporter
    bytes32 public immutable BALANCE_SCHEMA_UID;

    /// @inheritdoc IAttestationExporter
    bytes32 public immutable CONDITION_SCHEMA_UID;

    // The verifier's struct type hashes, read once: an answer's key is the hash the nodes signed it under.
    bytes32 private immutable _BALANCE_TYPEHASH;
    bytes32 private immutable _CONDITION_TYPEHASH;

    /// @inheritdoc IAttestationExporter
    mapping(bytes32 answerHash => bytes32 uid) public uidOf;

    /// @param verifier The network's attestation verifier.
    /// @param eas EAS (on an OP-stack chain, its predeploy); its schema registry registers the two schemas.
    constructor(IAttestationVerifier verifier, IEAS eas) SchemaResolver(eas) {
        if (address(verifier) == address(0)) revert AttestationExporter_ZeroAddress();
        VERIFIER = verifier;
        EAS = address(eas);
        _BALANCE_TYPEHASH = verifier.BALANCE_ATTESTATION_TYPEHASH();
        _CONDITION_TYPEHASH = verifier.CONDITION_ATTESTATION_TYPEHASH();
        ISchemaRegistry registry = eas.getSchemaRegistry();
        BALANCE_SCHEMA_UID = _registerOnce(registry, BALANCE_SCHEMA);
        CONDITION_SCHEMA_UID = _registerOnce(registry, CONDITION_SCHEMA);
    }

    /// @inheritdoc IAttestationExporter
    function exportAttestation(
        IAttestationVerifier.BalanceAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external returns (bytes32 uid) {
        bytes memory data = abi.encode(attestation);
        bytes32 answerHash = keccak256(abi.encodePacked(_BALANCE_TYPEHASH, data));
        uid = uidOf[answerHash];
        if (uid != bytes32(0)) return uid;
        VERIFIER.checkAttestation(attestation, signatures, MAX_EXPORT_AGE);
        // An Ethereum owner is an address left-padded to 32 bytes (the verifier's encoding); a Solana key is not.
        address recipient = attestation.chain == _ETHEREUM ? address(uint160(uint256(attestation.owner))) : address(0);
        uid = _attest(BALANCE_SCHEMA_UID, recipient, data);
        uidOf[answerHash] = uid;
        emit AttestationExported(answerHash, uid);
    }

    /// @inheritdoc IAttestationExporter
    function exportConditionAttestation(
        IAttestationVerifier.ConditionAttestation calldata attestation,
        IAttestationVerifier.NodeSignature[] calldata signatures
    ) external returns (bytes32 uid) {
        bytes memory data = abi.encode(attestation);
        bytes32 answerHash = keccak256(abi.encodePacked(_CONDITION_TYPEHASH, data));
        uid = uidOf[answerHash];
        if (uid != bytes32(0)) return uid;
        VERIFIER.checkConditionAttestation(attestation, signatures, MAX_EXPORT_AGE);
        uid = _attest(CONDITION_SCHEMA_UID, address(0), data);
        uidOf[answerHash] = uid;
        emit AttestationExported(answerHash, uid);
    }

    /// @dev The resolver's check: only this contract attests our schemas (EAS reverts `InvalidAttestation` on false).
    function onAttest(Attestation calldata attestation, uint256) internal view override returns (bool) {
        return attestation.attester == address(this);
    }

    /// @dev Never called: the schemas are not revocable, so EAS refuses every revocation before asking.
    function onRevoke(Attestation calldata, uint256) internal pure override returns (bool) {
        return false;
    }

    /// @dev Registers `schema` with this contract as resolver, not revocable (an answer states a holding at one
    /// block, which nothing later makes untrue), and returns its UID. Anyone may register any schema naming any
    /// resolver, and a second registration reverts: a schema registered under this address before it was deployed
    /// (its address follows from the deployer's nonce) would otherwise block the deployment. The UID binds the
    /// schema, the resolver and the flag, so a record already under it is this very registration.
    function _registerOnce(ISchemaRegistry registry, string memory schema) private returns (bytes32 uid) {
        uid = keccak256(abi.encodePacked(schema, address(this), false));
        if (registry.getSchema(uid).uid == uid) return uid;
        return registry.register(schema, ISchemaResolver(address(this)), false);
    }

    /// @dev One EAS attestation, not expiring, not revocable, referring to none, with no value.
    function _attest(bytes32 schema, address recipient, bytes memory data) private returns (bytes32) {
        return _eas.attest(
            AttestationRequest({
                schema: schema,
                data: AttestationRequestData({
                    recipient: recipient,
                    expirationTime: 0,
                    revocable: false,
                    refUID: bytes32(0),
                    data: data,
                    value: 0
                })
            })
        );
    }
}
