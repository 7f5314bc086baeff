// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import { SafeCast } from "@openzeppelin/contracts/utils/math/SafeCast.sol";

/*//////////////////////////////////////////////////////////////
                          PACKED WORD TYPES
//////////////////////////////////////////////////////////////*/

// The registry's packed words are user-defined value types (as Uniswap v4-core's `BalanceDelta` is), each
// with the functions that read and change it attached (`using ... global`): a field is read only through its
// own word's type, so a finalized body read as an open one, or a license account read as an attestation,
// does not compile. The types cost nothing: wrapping and unwrapping compile to no code. Their layouts are in
// `VotePacking`'s notes below.

/// @dev A job's `body` slot as stored: an `OpenJobBody` while the job is open (and after it expired, which
/// leaves the body as it was), a `FinalizedJobBody` once it is finalized. Only the job's status tells which,
/// so nothing is attached to it: the registry re-types it (`OpenJobBody.wrap(JobBody.unwrap(job.body))`) next
/// to the status check that allows it, and stores either life's word through `JobBody.wrap`. Built-in wrap and
/// unwrap, not helper functions: a helper that only re-types costs a jump (15-22 gas) in the optimizer's
/// output, measured on the gas snapshot, where wrap and unwrap cost nothing.
type JobBody is uint256;

/// @dev An open job's body: fee, callback gas limit, vote and answer counts, first two votes.
type OpenJobBody is uint256;

/// @dev A finalized job's body: source block and balance.
type FinalizedJobBody is uint256;

/// @dev A recorded attestation's word: balance, source block, issue time. Zero: no attestation recorded.
type RecordedAttestation is uint256;

/// @dev A license's fee credit (staked tokens), how all its votes on finalized jobs turned out, and whether it
/// is open (never zero again): one slot, so a finalization or a recording writes one slot per license it pays.
/// Bits: fees 0–95, open marker 191, agreed 192–223, disagreed 224–255; the others are unused.
type LicenseAccount is uint256;

using { feeOf, callbackGasLimitOf, voteCountOf } for OpenJobBody global;
using { balanceOf, sourceBlockOf } for FinalizedJobBody global;
using { isRecorded, attestedBalanceOf, attestedSourceBlockOf, attestedIssuedAtOf } for RecordedAttestation global;
using {
    feesOf,
    agreedOf,
    disagreedOf,
    isOpen,
    opened,
    addFees,
    withoutFees,
    addDisagreement,
    creditAgreeingVote
} for LicenseAccount global;

/*//////////////////////////////////////////////////////////////
                           LAYOUT CONSTANTS
//////////////////////////////////////////////////////////////*/

// At file level, where both the functions attached to the types and `VotePacking`'s vote books read them.

uint256 constant _FEE_MASK = (1 << 96) - 1;
uint256 constant _CALLBACK_SHIFT = 96;
uint256 constant _VOTE_COUNT_SHIFT = 128;
uint256 constant _CANDIDATE_COUNT_SHIFT = 136;
uint256 constant _BODY_VOTES_SHIFT = 144;
uint256 constant _BALANCE_SHIFT = 64;
uint256 constant _ATTESTED_BALANCE_SHIFT = 128;
uint256 constant _ATTESTED_SOURCE_BLOCK_SHIFT = 64;
uint256 constant _ACCOUNT_AGREED_SHIFT = 192;
uint256 constant _ACCOUNT_DISAGREED_SHIFT = 224;
uint256 constant _ACCOUNT_FEES_MASK = (1 << 96) - 1;
uint256 constant _ACCOUNT_OPEN = 1 << 191;
uint256 constant _ACCOUNT_DISAGREED_MASK = ((1 << 32) - 1) << _ACCOUNT_DISAGREED_SHIFT;

/*//////////////////////////////////////////////////////////////
                            OPEN JOB'S BODY
//////////////////////////////////////////////////////////////*/

function feeOf(OpenJobBody body) pure returns (uint256) {
    return OpenJobBody.unwrap(body) & _FEE_MASK;
}

function callbackGasLimitOf(OpenJobBody body) pure returns (uint256) {
    return uint32(OpenJobBody.unwrap(body) >> _CALLBACK_SHIFT);
}

function voteCountOf(OpenJobBody body) pure returns (uint256) {
    return (OpenJobBody.unwrap(body) >> _VOTE_COUNT_SHIFT) & 0xff;
}

/*//////////////////////////////////////////////////////////////
                          FINALIZED JOB'S BODY
//////////////////////////////////////////////////////////////*/

/// @dev The balance field of a finalized body (`VotePacking.LARGE_BALANCE`: kept elsewhere).
function balanceOf(FinalizedJobBody body) pure returns (uint256) {
    return FinalizedJobBody.unwrap(body) >> _BALANCE_SHIFT;
}

function sourceBlockOf(FinalizedJobBody body) pure returns (uint64) {
    return uint64(FinalizedJobBody.unwrap(body));
}

/*//////////////////////////////////////////////////////////////
                          RECORDED ATTESTATIONS
//////////////////////////////////////////////////////////////*/

/// @dev Whether the word holds an attestation: every recorded one has an issue time, so its word is never
/// zero, and a subject with none recorded reads zero.
function isRecorded(RecordedAttestation packed) pure returns (bool) {
    return RecordedAttestation.unwrap(packed) != 0;
}

/// @dev The balance field of a recorded attestation (`VotePacking.LARGE_ATTESTED_BALANCE`: kept elsewhere).
function attestedBalanceOf(RecordedAttestation packed) pure returns (uint256) {
    return RecordedAttestation.unwrap(packed) >> _ATTESTED_BALANCE_SHIFT;
}

function attestedSourceBlockOf(RecordedAttestation packed) pure returns (uint64) {
    return uint64(RecordedAttestation.unwrap(packed) >> _ATTESTED_SOURCE_BLOCK_SHIFT);
}

function attestedIssuedAtOf(RecordedAttestation packed) pure returns (uint64) {
    return uint64(RecordedAttestation.unwrap(packed));
}

/*//////////////////////////////////////////////////////////////
                            LICENSE ACCOUNTS
//////////////////////////////////////////////////////////////*/

// Each change returns the new account and the caller stores it: one read and one write of the slot, and the
// word stays on the stack. The struct this type replaced went through memory for a finalization's credit
// (five fields unpacked, updated and packed back), which cost about 470 gas more per paid license, and its
// member updates about 65 more per attestation signer (bench:gas). Every sum is checked arithmetic in its
// field's own width, so a field past its width reverts (Panic 0x11) rather than spilling into its neighbour.

function feesOf(LicenseAccount account) pure returns (uint256) {
    return uint96(LicenseAccount.unwrap(account));
}

function agreedOf(LicenseAccount account) pure returns (uint256) {
    return uint32(LicenseAccount.unwrap(account) >> _ACCOUNT_AGREED_SHIFT);
}

function disagreedOf(LicenseAccount account) pure returns (uint256) {
    return LicenseAccount.unwrap(account) >> _ACCOUNT_DISAGREED_SHIFT;
}

/// @dev Whether the account is open: its slot was written once and, whatever is claimed, stays non-zero, so
/// a fee credited to it rewrites a written slot (2,900 gas) instead of a fresh one (20,000).
function isOpen(LicenseAccount account) pure returns (bool) {
    return LicenseAccount.unwrap(account) & _ACCOUNT_OPEN != 0;
}

/// @dev The account with its open marker set (every other field as it was).
function opened(LicenseAccount account) pure returns (LicenseAccount) {
    return LicenseAccount.wrap(LicenseAccount.unwrap(account) | _ACCOUNT_OPEN);
}

/// @dev Adds `amount` to the fee credit (reverts past 96 bits) and opens the account: an account credited
/// once stays open, so a claim leaves it non-zero and its next fee costs a rewrite, not a first write.
function addFees(LicenseAccount account, uint96 amount) pure returns (LicenseAccount) {
    uint256 word = LicenseAccount.unwrap(account);
    uint96 fees = uint96(word) + amount;
    return LicenseAccount.wrap((word & ~_ACCOUNT_FEES_MASK) | fees | _ACCOUNT_OPEN);
}

/// @dev The account with its fee credit claimed (it stays open).
function withoutFees(LicenseAccount account) pure returns (LicenseAccount) {
    return LicenseAccount.wrap(LicenseAccount.unwrap(account) & ~_ACCOUNT_FEES_MASK);
}

/// @dev Counts one disagreeing outcome (reverts past 32 bits).
function addDisagreement(LicenseAccount account) pure returns (LicenseAccount) {
    uint256 word = LicenseAccount.unwrap(account);
    uint32 disagreed = uint32(word >> _ACCOUNT_DISAGREED_SHIFT) + 1;
    return LicenseAccount.wrap((word & ~_ACCOUNT_DISAGREED_MASK) | (uint256(disagreed) << _ACCOUNT_DISAGREED_SHIFT));
}

/// @dev Adds `feeShare` to the account's fee credit and one agreed outcome, and opens the account (as
/// `addFees` does). `feeShare` is a share of one job's fee, below 2^96 (`setRequestFee` refuses more), so it
/// is cast as it is; the sums revert (checked arithmetic) rather than wrap: a fee credit past 2^96, which the
/// registry's supply check rules out, or a count past 32 bits.
function creditAgreeingVote(LicenseAccount account, uint256 feeShare) pure returns (LicenseAccount) {
    uint256 word = LicenseAccount.unwrap(account);
    uint96 fees = uint96(word) + uint96(feeShare);
    uint32 agreed = uint32(word >> _ACCOUNT_AGREED_SHIFT) + 1;
    uint256 kept = word & _ACCOUNT_DISAGREED_MASK;
    return LicenseAccount.wrap(kept | fees | _ACCOUNT_OPEN | (uint256(agreed) << _ACCOUNT_AGREED_SHIFT));
}

/// @title VotePacking
/// @notice The bit layouts of the packed words the verification registry keeps its jobs, votes, license
/// accounts and recorded attestations in. They live here, apart from the registry's rules, so that each layout
/// is written once and can be fuzzed on its own (round trips, one field never spilling into another, the
/// bounds the registry relies on); the registry decides what to store, this library only how. The words the
/// registry stores are the value types above, read and changed through the functions attached to them; this
/// library builds them and keeps a job's votes.
/// @dev A job's `body` word (`JobBody`) has two lives:
/// - while the job is open (`OpenJobBody`): the fee (bits 0-95), the callback gas limit (96-127), the vote
///   count (128-135), the count of distinct answers (136-143) and the first two votes (144-199, 200-255);
/// - once it is finalized (`FinalizedJobBody`): the source block (bits 0-63) and the balance (64-255;
///   `LARGE_BALANCE` there means the balance was too wide and the registry keeps it whole elsewhere).
/// A vote is 56 bits: the license id (48 bits) above the index of the answer it voted for (8 bits). Votes
/// after the first two go four to an overflow word (vote `i` in word `(i - 2) / 4`, at `((i - 2) % 4) * 56`).
/// An open job's `commitment` holds the high half of its subject and the low half of its first answer.
/// A recorded attestation (`RecordedAttestation`) is one word: balance (bits 128-255), source block
/// (64-127), issue time (0-63).
/// A license's account (`LicenseAccount`) is one slot: the fee credit (bits 0-95), the open marker (191), the
/// agreed (192-223) and disagreed (224-255) counts; bits 96-190 are unused. The marker, once set (by
/// `openLicenseAccounts`, or by the first fee credited) it is never cleared, so the account's slot is never
/// zero again: a claim does not turn the next fee into a first write.
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

    /*//////////////////////////////////////////////////////////////
                               CONSTANTS
    //////////////////////////////////////////////////////////////*/

    /// @dev A finalized body's balance field holding this means: the balance is kept whole elsewhere.
    uint256 internal constant LARGE_BALANCE = (1 << 192) - 1;

    /// @dev A recorded attestation's balance field holding this means: the balance is kept whole elsewhere.
    uint256 internal constant LARGE_ATTESTED_BALANCE = (1 << 128) - 1;

    /// @dev What `indexOf` returns for a license without a vote.
    uint256 internal constant NOT_FOUND = type(uint256).max;

    uint256 private constant _BODY_VOTES = 2;
    uint256 private constant _VOTE_BITS = 56;
    uint256 private constant _VOTE_MASK = (1 << 56) - 1;
    uint256 private constant _VOTES_PER_WORD = 4;
    uint256 private constant _LOW_HALF = (1 << 128) - 1;

    /*//////////////////////////////////////////////////////////////
                            OPEN JOB'S BODY
    //////////////////////////////////////////////////////////////*/

    /// @dev The body of a job just opened: its fee and callback gas limit, no vote yet. The registry keeps
    /// the fee below 2^96 (`setRequestFee`) and the limit below 2^32 (a `uint32` field).
    function openBody(uint256 fee, uint256 callbackGasLimit) internal pure returns (OpenJobBody) {
        return OpenJobBody.wrap(fee | (callbackGasLimit << _CALLBACK_SHIFT));
    }

    /*//////////////////////////////////////////////////////////////
                          FINALIZED JOB'S BODY
    //////////////////////////////////////////////////////////////*/

    /// @dev The body of a finalized job. `balance` must not exceed `LARGE_BALANCE` (which is the marker of a
    /// balance kept elsewhere): the registry swaps a wider one for the marker first.
    function resultBody(uint256 balance, uint64 sourceBlock) internal pure returns (FinalizedJobBody) {
        return FinalizedJobBody.wrap((balance << _BALANCE_SHIFT) | sourceBlock);
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
    function packAttested(
        uint256 balance,
        uint64 sourceBlock,
        uint64 issuedAt
    ) internal pure returns (RecordedAttestation) {
        return RecordedAttestation.wrap(
            (balance << _ATTESTED_BALANCE_SHIFT) | (uint256(sourceBlock) << _ATTESTED_SOURCE_BLOCK_SHIFT) | issuedAt
        );
    }

    /*//////////////////////////////////////////////////////////////
                            LICENSE ACCOUNTS
    //////////////////////////////////////////////////////////////*/

    /// @dev An account with these fields. The registry never builds one whole (an account starts at zero and changes a field or two at a time); this
    /// is the layout written out, for the tests to build any account.
    function packLicenseAccount(
        uint96 fees,
        uint32 agreed,
        uint32 disagreed,
        bool open
    ) internal pure returns (LicenseAccount) {
        return LicenseAccount.wrap(
            uint256(fees) | (uint256(agreed) << _ACCOUNT_AGREED_SHIFT) | (uint256(disagreed) << _ACCOUNT_DISAGREED_SHIFT)
                | (open ? _ACCOUNT_OPEN : 0)
        );
    }

    /*//////////////////////////////////////////////////////////////
                               VOTE BOOKS
    //////////////////////////////////////////////////////////////*/

    /// @dev Unpacks job `jobId`'s votes from its open `body` and its overflow words, with room for `extra`
    /// more.
    function loadVotes(
        mapping(uint256 jobId => mapping(uint256 word => uint256 packedVotes)) storage overflow,
        uint256 jobId,
        OpenJobBody body,
        uint256 extra
    ) internal view returns (VoteBook memory book) {
        book.voteCount = (OpenJobBody.unwrap(body) >> _VOTE_COUNT_SHIFT) & 0xff;
        book.candidateCount = (OpenJobBody.unwrap(body) >> _CANDIDATE_COUNT_SHIFT) & 0xff;
        book.votes = new uint256[](book.voteCount + extra);
        for (uint256 i = 0; i < book.voteCount; ++i) {
            if (i < _BODY_VOTES) {
                book.votes[i] = (OpenJobBody.unwrap(body) >> (_BODY_VOTES_SHIFT + i * _VOTE_BITS)) & _VOTE_MASK;
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
        OpenJobBody body,
        uint256 firstNew
    ) internal returns (OpenJobBody newBody) {
        // Step for step the untyped `newBody = body & ...; newBody |= ...;` this replaced: the optimizer gives
        // that shape the same gas, where the shorter ones tried cost up to 31 gas a vote more or 6 less
        // (measured on the gas snapshot), and the bench's figures stay the untyped code's.
        newBody = OpenJobBody.wrap(OpenJobBody.unwrap(body) & ((1 << _VOTE_COUNT_SHIFT) - 1));
        newBody = OpenJobBody.wrap(
            OpenJobBody.unwrap(newBody) | (book.voteCount << _VOTE_COUNT_SHIFT | book.candidateCount << _CANDIDATE_COUNT_SHIFT)
        );
        for (uint256 i = 0; i < _BODY_VOTES && i < book.voteCount; ++i) {
            newBody = OpenJobBody.wrap(OpenJobBody.unwrap(newBody) | book.votes[i] << (_BODY_VOTES_SHIFT + i * _VOTE_BITS));
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
}
