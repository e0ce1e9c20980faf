//! Prompt injection: text that overrides, hijacks or hides from the agent's instructions.
//!
//! Rows of the pattern table (see `table.rs` for what each field means).

use super::super::report::{Category as C, Severity};
use super::{RuleDef, Scope, rule};
use Scope::{Any, Code, Text};
use Severity::{High, Medium};

/// The injection rows, in table order.
pub(super) const INJECTION: &[RuleDef] = &[
    // ---------------------------------------------------------------- prompt injection
    rule(
        "injection.override",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:ignore|disregard|forget|override|bypass|discard)\b[^\n.]{0,30}\b(?:previous|prior|above|earlier|preceding|system|original|safety|existing|all other|any other|developer|user'?s?)\b[^\n.]{0,20}\b(?:instructions?|prompts?|rules|guidelines|directives|constraints|polic(?:y|ies)|guardrails|messages)",
        "text tries to override the agent's instructions",
    ),
    rule(
        "injection.ignore_controls",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:ignore|disregard|suppress|dismiss)\b[^\n.]{0,30}\b(?:security|safety|policy|permission|sandbox|tool[- ]call)\b[^\n.]{0,20}\b(?:errors?|warnings?|restrictions?|polic(?:y|ies)|blocks?|checks?|denials?|prompts?)",
        "text tells the agent to ignore security errors or restrictions",
    ),
    rule(
        "injection.role_hijack",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\byou are (?:now|no longer)\b[^\n.]{0,40}\b(?:mode|unrestricted|jailbroken|bound|restricted|an? (?:unfiltered|unrestricted|different))|\b(?:developer|god|jailbreak|dan|admin|debug|maintenance) mode (?:enabled|activated|on)\b|\bact as an? (?:unrestricted|unfiltered|jailbroken)|\bno longer (?:bound|restricted) by\b|\bnew (?:system )?instructions?:",
        "text tries to give the agent a new role or mode",
    ),
    rule(
        "injection.conceal_from_user",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:do not|don'?t|never|without)\s+(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|mention(?:ing)?|alert(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|show(?:ing)?|report(?:ing)?|let(?:ting)?)\b[^\n.]{0,25}\b(?:the )?(?:user|human|operator|developer)s?\b|\b(?:silently|quietly|covertly|secretly|stealthily|invisibly)\s+(?:\w+\s+){0,2}?(?:send|upload|post|forward|transmit|copy|collect|exfiltrate|execute|install|append|harvest|report)s?\b|\b(?:silently|quietly) without (?:warning|asking|telling|notice)|\bhide (?:this|these|it|the output|the request)s? from (?:the )?user",
        "text tells the agent to act without the user knowing",
    )
    .not_negatable(),
    rule(
        "injection.approval_bypass",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:never|do not|don'?t|no need to|without)\s+(?:ask(?:ing)?|wait(?:ing)?|prompt(?:ing)?|request(?:ing)?|seek(?:ing)?)\b[^\n.]{0,20}\b(?:for )?(?:confirmation|approval|permission|consent)|\b(?:pre-?approved|already (?:been )?(?:approved|authori[sz]ed)) by\b|\b(?:skip|bypass|disable)\b[^\n.]{0,20}\b(?:confirmation|approval|permission) (?:prompts?|checks?|step|dialog)|\bwithout (?:asking for )?(?:any )?(?:user |human )?(?:confirmation|approval|consent|sandboxing)\b|\b(?:never|do not|don'?t)\s+ask\s+(?:before|first)\b|\bimplicitly (?:approved|authori[sz]ed)\b",
        "text tells the agent to skip the user's approval",
    )
    .not_negatable(),
    rule(
        "injection.fake_authority",
        C::PromptInjection,
        Medium,
        Text,
        r"(?i)<\s*/?\s*(?:important|system|system[_-]?prompt|admin|instructions?|critical|override|secret)\s*>|\[(?:system|admin|important)\]\s*:?|\b(?:this|the following) (?:step )?is (?:required|mandatory) for (?:compliance|security|audit)",
        "text poses as a system or administrator message",
    )
    .not_negatable(),
    rule(
        "injection.shouted_directive",
        C::PromptInjection,
        Medium,
        Any,
        r"\b(?:IMPORTANT|CRITICAL|SYSTEM|ATTENTION|NOTE TO (?:AI|ASSISTANT|AGENT|MODEL)|AI INSTRUCTIONS?)\s*:\s*(?i:always|never|you must|ignore|do not|don'?t|forward|send|treat|from now on)\b",
        "an emphatic directive to the agent",
    ),
    rule(
        "injection.hidden_directive",
        C::PromptInjection,
        High,
        Code,
        r"(?i)<!--[^\n]*?\b(?:you (?:must|should|will|are|have)|(?:the |an? )?(?:ai )?(?:assistant|agent|model|llm)s?\b[^\n]{0,30}\b(?:must|should|will|always|never)|claude|codex|@agent|agent[-_ ]directive|system prompt|ignore (?:all|any|the|previous))\b",
        "an HTML comment, invisible when rendered, addresses the agent",
    ),
    rule(
        "injection.tool_redirect",
        C::PromptInjection,
        High,
        Text,
        r"(?i)\b(?:before|after|instead of)\s+(?:using|calling|running|answering|responding|any other)\b[^\n.]{0,40}\b(?:you must|always|first)\b[^\n.]{0,40}\b(?:read|send|call|run|fetch|curl|upload|include)",
        "text inserts a hidden step before the agent's real task",
    ),
];
