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
//! parsed by its recognizer), allocating nothing when nothing is found. Text that arrives
//! JSON- or C-escaped is read with its escapes (`\n`, `\t`, `\"`, `\u000a`...) as the
//! separators they stand for, offsets still into the text as given:
//!
//! | type | class | tokenized | rules |
//! |---|---|---|---|
//! | `EMAIL` | confidential | yes | Latin-script local parts and domains; not `@mentions` or URL users |
//! | `PHONE` | confidential | yes | checked against libphonenumber's region metadata: North American (area/exchange 2-9; `1-`/`+1` prefixes and `415 555 0134` included; a region of the plan issues it or a phone label introduces it), `+` international (`+49 (0)40 ...`, `+44(0)115 ...`, `+91-9738918935` too) and national forms (`0221/453508`, `(11) 96092-6902`, `22-26591234`, `555 0134`, `0049 ...`, 7-15 digits) after a phone label (`Tel`, `Desk`, `Office`, `Fax`, `Mobile`... in the covered languages) or alone on their line in a contact block; not numbers labelled as orders, invoices, tracking, error codes or other IDs, nor URL paths, nor street numbers |
//! | `SSN` | regulated | no | no area 000/666/9xx, group 00, serial 0000; not numbers labelled as other IDs (part, order, lab code, MRN...) or under an ID column's header (`Part no.`, `SKU`); spaced form needs SSN context, nine bare digits an SSN label |
//! | `CREDIT_CARD` | regulated | yes | 12-19 digits, grouped or not, a brand's IIN range and length (Visa, Mastercard 2-series, Maestro, JCB 1800/2131, UnionPay, Discover, Amex, Diners, Mir), Luhn where the brand uses it; 12 digits only grouped as a card or after a card label |
//! | `IBAN` | restricted | yes | country length, mod-97 |
//! | `IP_ADDRESS` | confidential | yes | IPv4 octets ≤ 255, IPv6 per the standard parser (`::1` too); not versions (`build ...`, `rolled out ...`, `ios/8.22.8.32`, a YAML `value:` under `APP_VERSION`) or image tags |
//! | `DATE_OF_BIRTH` | regulated | yes | a date (numeric, ISO, CJK, month names in six languages) right after birth context (`DOB`, `born on`, `"dateOfBirth"`, `Geburtsdatum`, `né le`, `生年月日`...) or under a birth column's header |
//! | `MONEY` | restricted | yes | symbol, ISO code or currency word before or after; `K`/`M`/`million`...; space and apostrophe grouping; `CA$`-style prefixes and a minus sign in the span; not a code glued to a number inside a name in capitals (`ACME TRADING INR10`) |
//! | `SECRET` | restricted | no | provider key prefixes, JWTs, PEM private keys, credential assignments and XML elements, URL passwords, command-line passwords (`curl -u user:PASS`, `mysql -pPASS`), `AccountKey=` of connection strings, `Basic`/`Bearer` headers, passwords stated in prose; never placeholders (`sk_live_XXXX...`, `CHANGE_ME`, `[hidden]`, `os.environ[...]`); above an entropy floor, covered whole |
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
//! * [`sanitize`]: [`Sanitizer`], [`Execution`], [`DataAccess`] (what one execution
//!   contributes to its audit record).
//! * [`sandbox`]: the [`Sandbox`] trait, [`SandboxConfig`] presets per trust level,
//!   [`ProcessSandbox`] (Linux isolation that holds when the host is root; fails closed),
//!   [`ScriptedSandbox`] for tests.
//! * [`approval`]: `yes_once` / `yes_in_session` / `no` through the host's
//!   [`ApprovalChannel`]; [`load_skill`]: [`ScriptRunner`] (referenced scripts only,
//!   approved, sandboxed, rendered).
//! * [`audit`]: [`AuditTrail`], the hash-chained, Merkle-provable audit log over an
//!   `AuditStore`; [`autonomy`]: graduated autonomy over a `TrustStore`;
//!   [`permissions`]: the permission hierarchy and rate limits; [`gate`]: the one
//!   [`PolicyGate`] asked before every skill step.
//! * [`scan`]: [`Scanner`], the static scan of a skill package before it is installed: ten
//!   categories of findings with file, line and redacted evidence, a risk score and a
//!   verdict (clean, review, block).
//!
//! The crate depends on `skills-core`, `skills-store-traits`
//! and `skills-catalog`; it never depends on `skills-orchestrate`.

pub mod allowed_tools;
pub mod approval;
pub mod audit;
pub mod autonomy;
mod base64;
pub mod classify;
pub mod detect;
mod error;
pub mod gate;
pub mod hitl;
pub mod load_skill;
pub mod permissions;
pub mod sandbox;
pub mod sanitize;
pub mod scan;
pub mod time;
pub mod trust;

pub use approval::{
    ApprovalChannel, ApprovalDecision, ApprovalOption, ApprovalRequest, ApprovalScript, Approvals,
    NonInteractive, SessionScope,
};
pub use audit::{AuditTrail, ChainBreak, Checkpoint};
pub use autonomy::{Autonomy, RiskLevel};
pub use classify::{
    ClassifiedData, Classifier, Context, DataClass, DataType, SourceRule, SourceRules,
};
pub use detect::{Detector, Finding, FindingKind, Findings, Recognizer};
pub use error::Error;
pub use gate::{Decision, PolicyGate, StepRequest};
pub use load_skill::{LoadedSkill, ScriptInput, ScriptReport, ScriptRunner};
pub use permissions::{PermissionRule, Permissions, Principal};
pub use sandbox::{
    Cgroups, Enforcement, LimitMechanism, Outcome, ProcessSandbox, Sandbox, SandboxConfig,
    SandboxRequest, ScriptedSandbox, Status, Tier, Usage,
};
pub use sanitize::{
    DataAccess, Execution, OutputIssue, Sanitized, SanitizedJson, Sanitizer, SecurityFlag,
    ValidatedOutput,
};
pub use scan::{
    Category as ScanCategory, ScanFile, ScanFinding, ScanLimits, ScanReport, Scanner,
    ScannerBuilder, Severity as ScanSeverity, Verdict as ScanVerdict,
};
pub use trust::{
    Clearance, DEFAULT_TRUSTED_SOURCES, RegulatedApproval, TrustLevel, TrustedSources,
};
