// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";

/// @title VotePacking
/// @notice The bit layouts of the packed words the verification registry keeps its jobs, votes, license
/// accounts and recorded attestations in. They live here, apart from the registry's rules, so that each layout
/// is written once and can be fuzzed on its own (round trips, one field never spilling into another, the
/// bounds the registry relies on); the registry decides what to store, this library only how.
/// @dev A job's `body` word has two lives:
/// - while the job is open: the fee (bits 0-95), the callback gas limit (96-127), the vote count (128-135),
///   the count of distinct answers (136-143) and the first two votes (144-199, 200-255);
/// - once it is finalized: the source block (bits 0-63) and the balance (64-255; `LARGE_BALANCE` there means
///   the balance was too wide and the registry keeps it whole elsewhere).
/// A vote is 56 bits: the license id (48 bits) above the index of the answer it voted for (8 bits). Votes
/// after the first two go four to an overflow word (vote `i` in word `(i - 2) / 4`, at `((i - 2) % 4) * 56`).
/// An open job's `commitment` holds the high half of its subject and the low half of its first answer.
/// A recorded attestation is one word: balance (bits 128-255), source block (64-127), issue time (0-63).
/// A license's account is one slot, `LicenseAccount`, laid out by the compiler.
/// Nothing here checks the vote limit: the registry refuses a submission that would take a job past
/// `MAX_VOTES_PER_JOB` (16) votes before it packs anything, which keeps the counts (8 bits) and answer
/// indexes (8 bits) in range and bounds every loop here.
library VotePacking {
    using SafeCast for uint256;

    /*//////////////////////////////////////////////////////////////
                                 TYPES
    //////////////////////////////////////////////////////////////*/

    /// @dev A job's votes, unpacked in memory. `votes[i] = licenseId << 8 | candidateIndex`; `votes` may be
    /// longer than `voteCount`, with room for the votes about to be appended.
    struct VoteBook {
        uint256 voteCount;
        uint256 candidateCount;
        uint256[] votes;
    }

    /// @dev A license's fee credit (staked tokens), its agreeing votes in `epoch`, and how all its votes on
    /// finalized jobs turned out: one slot, so a finalization writes one slot per license it pays.
    struct LicenseAccount {
        uint96 fees;
        uint32 epoch;
        uint64 epochVotes;
        uint32 agreed;
        uint32 disagreed;
    }

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @dev A finalized body's balance field holding this means: the balance is kept whole elsewhere.
    uint256 internal constant LARGE_BALANCE = (1 << 192) - 1;

    /// @dev A recorded attestation's balance field holding this means: the balance is kept whole elsewhere.
    uint256 internal constant LARGE_ATTESTED_BALANCE = (1 << 128) - 1;

    /// @dev What `indexOf` returns for a license without a vote.
    uint256 internal constant NOT_FOUND = type(uint256).max;

    uint256 private constant _FEE_MASK = (1 << 96) - 1;
    uint256 private constant _CALLBACK_SHIFT = 96;
    uint256 private constant _VOTE_COUNT_SHIFT = 128;
    uint256 private constant _CANDIDATE_COUNT_SHIFT = 136;
    uint256 private constant _BODY_VOTES_SHIFT = 144;
    uint256 private constant _BODY_VOTES = 2;
    uint256 private constant _VOTE_BITS = 56;
    uint256 private constant _VOTE_MASK = (1 << 56) - 1;
    uint256 private constant _VOTES_PER_WORD = 4;
    uint256 private constant _BALANCE_SHIFT = 64;
    uint256 private constant _ATTESTED_BALANCE_SHIFT = 128;
    uint256 private constant _ATTESTED_SOURCE_BLOCK_SHIFT = 64;
    uint256 private constant _LOW_HALF = (1 << 128) - 1;

    /*//////////////////////////////////////////////////////////////
                            OPEN JOB'S BODY
    //////////////////////////////////////////////////////////////*/

    /// @dev The body of a job just opened: its fee and callback gas limit, no vote yet. The registry keeps
    /// the fee below 2^96 (`setRequestFee`) and the limit below 2^32 (a `uint32` field).
    function openBody(uint256 fee, uint256 callbackGasLimit) internal pure returns (uint256) {
        return fee | (callbackGasLimit << _CALLBACK_SHIFT);
    }

    function feeOf(uint256 body) internal pure returns (uint256) {
        return body & _FEE_MASK;
    }

    function callbackGasLimitOf(uint256 body) internal pure returns (uint256) {
        return uint32(body >> _CALLBACK_SHIFT);
    }

    function voteCountOf(uint256 body) internal pure returns (uint256) {
        return (body >> _VOTE_COUNT_SHIFT) & 0xff;
    }

    /*//////////////////////////////////////////////////////////////
                          FINALIZED JOB'S BODY
    //////////////////////////////////////////////////////////////*/

    /// @dev The body of a finalized job. `balance` must not exceed `LARGE_BALANCE` (which is the marker of a
    /// balance kept elsewhere): the registry swaps a wider one for the marker first.
    function resultBody(uint256 balance, uint64 sourceBlock) internal pure returns (uint256) {
        return (balance << _BALANCE_SHIFT) | sourceBlock;
    }

    /// @dev The balance field of a finalized body (`LARGE_BALANCE`: kept elsewhere).
    function balanceOf(uint256 body) internal pure returns (uint256) {
        return body >> _BALANCE_SHIFT;
    }

    function sourceBlockOf(uint256 body) internal pure returns (uint64) {
        return uint64(body);
    }

    /*//////////////////////////////////////////////////////////////
                          OPEN JOB'S COMMITMENT
    //////////////////////////////////////////////////////////////*/

    /// @dev The high half of a subject, as an open job's `commitment` holds it (a second preimage of 128 bits
    /// is what matching it with another subject takes).
    function subjectDigest(bytes32 subject) internal pure returns (uint256) {
        return uint256(subject) & ~_LOW_HALF;
    }

    /// @dev The subject half of an open job's `commitment`, comparable with `subjectDigest`.
    function subjectHalfOf(uint256 commitment) internal pure returns (uint256) {
        return commitment & ~_LOW_HALF;
    }

    /// @dev `commitment` with the low half of the job's first answer written beside its subject half.
    function withFirstAnswer(uint256 commitment, bytes32 resultHash) internal pure returns (uint256) {
        return commitment | (uint256(resultHash) & _LOW_HALF);
    }

    /// @dev Whether `resultHash` is the job's first answer, whose low half `commitment` holds.
    function isFirstAnswer(uint256 commitment, bytes32 resultHash) internal pure returns (bool) {
        return commitment & _LOW_HALF == uint256(resultHash) & _LOW_HALF;
    }

    /*//////////////////////////////////////////////////////////////
                          RECORDED ATTESTATIONS
    //////////////////////////////////////////////////////////////*/

    /// @dev A recorded attestation's word. `balance` must not exceed `LARGE_ATTESTED_BALANCE` (the marker of
    /// a balance kept elsewhere): the registry swaps a wider one for the marker first.
    function packAttested(uint256 balance, uint64 sourceBlock, uint64 issuedAt) internal pure returns (uint256) {
        return (balance << _ATTESTED_BALANCE_SHIFT) | (uint256(sourceBlock) << _ATTESTED_SOURCE_BLOCK_SHIFT) | issuedAt;
    }

    /// @dev The balance field of a recorded attestation (`LARGE_ATTESTED_BALANCE`: kept elsewhere).
    function attestedBalanceOf(uint256 packed) internal pure returns (uint256) {
        return packed >> _ATTESTED_BALANCE_SHIFT;
    }

    function attestedSourceBlockOf(uint256 packed) internal pure returns (uint64) {
        return uint64(packed >> _ATTESTED_SOURCE_BLOCK_SHIFT);
    }

    function attestedIssuedAtOf(uint256 packed) internal pure returns (uint64) {
        return uint64(packed);
    }

    /*//////////////////////////////////////////////////////////////
                               VOTE BOOKS
    //////////////////////////////////////////////////////////////*/

    /// @dev Unpacks job `jobId`'s votes from its open `body` and its overflow words, with room for `extra`
    /// more.
    function loadVotes(
        mapping(uint256 jobId => mapping(uint256 word => uint256 packedVotes)) storage overflow,
        uint256 jobId,
        uint256 body,
        uint256 extra
    ) internal view returns (VoteBook memory book) {
        book.voteCount = (body >> _VOTE_COUNT_SHIFT) & 0xff;
        book.candidateCount = (body >> _CANDIDATE_COUNT_SHIFT) & 0xff;
        book.votes = new uint256[](book.voteCount + extra);
        for (uint256 i = 0; i < book.voteCount; ++i) {
            if (i < _BODY_VOTES) {
                book.votes[i] = (body >> (_BODY_VOTES_SHIFT + i * _VOTE_BITS)) & _VOTE_MASK;
            } else {
                uint256 position = i - _BODY_VOTES;
                uint256 word = overflow[jobId][position / _VOTES_PER_WORD];
                book.votes[i] = (word >> ((position % _VOTES_PER_WORD) * _VOTE_BITS)) & _VOTE_MASK;
            }
        }
    }

    /// @dev Packs `book` back and returns the new body (the caller stores it): the counts and first two
    /// votes over `body`'s fee and callback limit, and the overflow words from the one holding vote
    /// `firstNew` on (the earlier ones hold no new vote, so rewriting them would only cost gas).
    function storeVotes(
        mapping(uint256 jobId => mapping(uint256 word => uint256 packedVotes)) storage overflow,
        uint256 jobId,
        VoteBook memory book,
        uint256 body,
        uint256 firstNew
    ) internal returns (uint256 newBody) {
        newBody = body & ((1 << _VOTE_COUNT_SHIFT) - 1);
        newBody |= book.voteCount << _VOTE_COUNT_SHIFT | book.candidateCount << _CANDIDATE_COUNT_SHIFT;
        for (uint256 i = 0; i < _BODY_VOTES && i < book.voteCount; ++i) {
            newBody |= book.votes[i] << (_BODY_VOTES_SHIFT + i * _VOTE_BITS);
        }
        if (book.voteCount <= _BODY_VOTES) return newBody;
        uint256 firstWord = firstNew <= _BODY_VOTES ? 0 : (firstNew - _BODY_VOTES) / _VOTES_PER_WORD;
        uint256 lastWord = (book.voteCount - _BODY_VOTES - 1) / _VOTES_PER_WORD;
        for (uint256 w = firstWord; w <= lastWord; ++w) {
            uint256 word;
            for (uint256 slot = 0; slot < _VOTES_PER_WORD; ++slot) {
                uint256 i = _BODY_VOTES + w * _VOTES_PER_WORD + slot;
                if (i < book.voteCount) word |= book.votes[i] << (slot * _VOTE_BITS);
            }
            overflow[jobId][w] = word;
        }
    }

    /// @dev Appends `licenseId`'s vote for answer `candidate` in the room `loadVotes` made. A license id
    /// above 48 bits reverts (SafeCast's error) rather than being cut to another license's id; `candidate`
    /// is below the vote limit, so it fits its 8 bits.
    function appendVote(VoteBook memory book, uint256 licenseId, uint256 candidate) internal pure {
        book.votes[book.voteCount++] = (uint256(licenseId.toUint48()) << 8) | candidate;
    }

    /// @dev The license id of a packed vote (an element of `VoteBook.votes`).
    function licenseOf(uint256 vote) internal pure returns (uint256) {
        return vote >> 8;
    }

    /// @dev The answer index of a packed vote (an element of `VoteBook.votes`).
    function candidateOf(uint256 vote) internal pure returns (uint256) {
        return vote & 0xff;
    }

    /// @dev The position of `licenseId`'s vote, or `NOT_FOUND`.
    function indexOf(VoteBook memory book, uint256 licenseId) internal pure returns (uint256) {
        for (uint256 i = 0; i < book.voteCount; ++i) {
            if (book.votes[i] >> 8 == licenseId) return i;
        }
        return NOT_FOUND;
    }

    /// @dev How many votes are for answer `candidate`.
    function countFor(VoteBook memory book, uint256 candidate) internal pure returns (uint256 count) {
        for (uint256 i = 0; i < book.voteCount; ++i) {
            if (book.votes[i] & 0xff == candidate) ++count;
        }
    }

    /*//////////////////////////////////////////////////////////////
                            LICENSE ACCOUNTS
    //////////////////////////////////////////////////////////////*/

    /// @dev Opens `epoch` in the account: its agreeing votes restart from zero. The caller first keeps the
    /// votes of the epoch the account held, if any (they are an ended epoch's claim). An epoch past 32 bits
    /// reverts (SafeCast's error) rather than wrapping to an old one; at the shortest sensible epoch, a
    /// second, that is over a century away.
    function startEpoch(LicenseAccount memory account, uint256 epoch) internal pure {
        account.epoch = epoch.toUint32();
        account.epochVotes = 0;
    }

    /// @dev Adds `feeShare` to the account's fee credit, one agreeing vote in its epoch and one agreed
    /// outcome. `feeShare` is a share of one job's fee, below 2^96 (`setRequestFee` refuses more), so it is
    /// cast as it is; the sums revert (checked arithmetic) rather than wrap: a fee credit past 2^96, which
    /// the registry's supply check rules out, or a counter past its width.
    function creditAgreeingVote(LicenseAccount memory account, uint256 feeShare) internal pure {
        account.fees += uint96(feeShare);
        ++account.epochVotes;
        ++account.agreed;
    }
}
