//! Security for agent skills.
//!
//! Customer data passes through this crate before any skill sees it, and a skill's output
//! passes through it before anyone else does (seed 000, part 1):
//!
//! 1. **Classify** ([`Classifier`]): every text or JSON field gets one of five
//!    [`DataClass`]es, from its content (the [`Detector`]'s findings) and its source
//!    ([`SourceRules`]: `crm_deal` is confidential, `financial_report` restricted, anything
//!    else internal).
//! 2. **Check permission** ([`Clearance`]): a skill's [`TrustLevel`] decides what it may
//!    see; regulated data needs a core skill and a [`RegulatedApproval`] for the execution.
//! 3. **Tokenize** what it may not see (`[EMAIL_001]`, the same value always the same token
//!    within an [`Execution`]),
//! 4. **redact** what cannot be tokenized (`[REDACTED: SSN]`), and
//! 5. **validate the output** ([`Execution::validate_output`]): block raw values it was not
//!    cleared for and made-up tokens, restore tokens its recipient may see.
//!
//! ```
//! use skills_security::{Clearance, Context, Sanitizer, TrustLevel};
//!
//! let sanitizer = Sanitizer::default();
//! let mut run = sanitizer.begin("exec-1", TrustLevel::Core, None)?;
//! let input = run.sanitize_text("Patient was born on 08/17/1988; card 4539 1488 0343 6467.", &Context::default());
//! assert_eq!(input.text, "Patient was born on [DATE_OF_BIRTH_001]; card [CREDIT_CARD_001].");
//! let reply = run.validate_output("Noted [CREDIT_CARD_001].", Clearance::ALL)?;
//! assert_eq!(reply.text, "Noted 4539 1488 0343 6467.");
//! # Ok::<(), skills_security::Error>(())
//! ```
//!
//! # Built-in recognizers
//!
//! All run in one pass over the text (one Aho-Corasick automaton of triggers, each hit
//! parsed by its recognizer), allocating nothing when nothing is found:
//!
//! | type | class | tokenized | rules |
//! |---|---|---|---|
//! | `EMAIL` | confidential | yes | Latin-script local parts and domains; not `@mentions` or URL users |
//! | `PHONE` | confidential | yes | North American (area/exchange 2-9) and `+` international; not order numbers or URL paths |
//! | `SSN` | regulated | no | no area 000/666/9xx, group 00, serial 0000; not part/order numbers; spaced form needs SSN context |
//! | `CREDIT_CARD` | regulated | yes | 13-19 digits, grouped or not, network first digit, Luhn |
//! | `IBAN` | restricted | yes | country length, mod-97 |
//! | `IP_ADDRESS` | confidential | yes | IPv4 octets ≤ 255, IPv6 per the standard parser; not versions |
//! | `DATE_OF_BIRTH` | regulated | yes | a date right after birth context (`DOB`, `born on`, `"dob"`...) |
//! | `MONEY` | restricted | yes | symbol or ISO code before or after; `K`/`M`/`million`... |
//! | `SECRET` | restricted | no | provider key prefixes, JWTs, PEM private keys, credential assignments above an entropy floor |
//! | `HEALTH` | regulated | yes | diagnosis, prognosis, medication, patient id, medical record... |
//! | `FINANCIAL` | restricted | yes | revenue, profit, margin, contract value, deal size, pricing |
//! | `MARKED` | restricted | yes | confidential, proprietary |
//! | `CONTACT` | confidential | yes | contact with a name, e-mail or phone |
//!
//! A host adds its own (a person-name model, say) with the [`Recognizer`] trait; they share
//! the classification and the token vault.
//!
//! # Map
//!
//! * [`classify`]: [`DataClass`], [`DataType`], [`Classifier`], JSON classification.
//! * [`detect`]: [`Detector`], [`Finding`], [`Recognizer`].
//! * [`trust`]: [`TrustLevel`], [`Clearance`], [`TrustedSources`].
//! * [`sanitize`]: [`Sanitizer`], [`Execution`], [`AuditRecord`].
//!
//! Later work adds the sandbox, approvals, autonomy, permissions, the audit trail and the
//! skill scanner beside these modules. The crate depends on no other `skills-*` crate yet;
//! it never depends on `skills-orchestrate`.

pub mod classify;
pub mod detect;
mod error;
pub mod sanitize;
pub mod trust;

pub use classify::{
    ClassifiedData, Classifier, Context, DataClass, DataType, SourceRule, SourceRules,
};
pub use detect::{Detector, Finding, FindingKind, Findings, Recognizer};
pub use error::Error;
pub use sanitize::{
    AuditRecord, Execution, OutputIssue, Sanitized, SanitizedJson, Sanitizer, SecurityFlag,
    ValidatedOutput,
};
pub use trust::{
    Clearance, DEFAULT_TRUSTED_SOURCES, RegulatedApproval, TrustLevel, TrustedSources,
};
