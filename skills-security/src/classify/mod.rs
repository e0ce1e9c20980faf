//! Classification (seed 000, section 1.2): the five classes, data types, and classifying
//! text and JSON by content and by source.

mod class;
pub(crate) mod json;

use std::collections::BTreeMap;

use serde::Serialize;

pub use class::{DataClass, DataType};
pub use json::{FieldClass, JsonClassification};

use crate::detect::{Detector, Finding, Findings};

/// Where data came from, which can raise its class (`crm_deal`, `financial_report`), and
/// the least class it is known to have (data derived from a confidential source stays
/// confidential, whatever it now looks like).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Context {
    /// The source name; empty means unknown.
    pub source: String,
    /// The least class of every item, over the source's rule (`None`: the rule's alone).
    pub at_least: Option<DataClass>,
}

impl Context {
    /// Data from `source`.
    pub fn source(source: impl Into<String>) -> Context {
        Context {
            source: source.into(),
            at_least: None,
        }
    }

    /// The same context, with every item at least of `class` (never lowered: the higher of
    /// `class` and a floor already set).
    ///
    /// ```
    /// use skills_security::{Classifier, Context, DataClass};
    ///
    /// let derived = Context::default().at_least(DataClass::Confidential);
    /// let c = Classifier::new().classify_text("a summary of the deal", &derived);
    /// assert_eq!(c.classification, DataClass::Confidential);
    /// ```
    pub fn at_least(mut self, class: DataClass) -> Context {
        self.at_least = Some(self.at_least.map_or(class, |floor| floor.max(class)));
        self
    }
}

/// What a source implies for all data from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRule {
    /// The class every item from the source has at least.
    pub class: DataClass,
    /// Its data type when nothing more specific is found.
    pub data_type: DataType,
    /// The source name recorded in the classification (`"crm"` for `crm_deal`).
    pub recorded_as: String,
    /// Whether items may be tokenized whole.
    pub tokenizable: bool,
    /// How long items may be kept, if limited.
    pub retention_days: Option<u32>,
}

/// Source rules, with the seed's defaults: `crm_deal` is confidential deal information,
/// `financial_report` restricted financial data, anything else internal and general.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRules {
    rules: BTreeMap<String, SourceRule>,
    default_class: DataClass,
}

impl Default for SourceRules {
    fn default() -> Self {
        let mut rules = BTreeMap::new();
        rules.insert(
            "crm_deal".to_owned(),
            SourceRule {
                class: DataClass::Confidential,
                data_type: DataType::DEAL_INFO,
                recorded_as: "crm".to_owned(),
                tokenizable: true,
                retention_days: None,
            },
        );
        rules.insert(
            "financial_report".to_owned(),
            SourceRule {
                class: DataClass::Restricted,
                data_type: DataType::FINANCIAL,
                recorded_as: "financial_system".to_owned(),
                tokenizable: true,
                retention_days: None,
            },
        );
        SourceRules {
            rules,
            default_class: DataClass::Internal,
        }
    }
}

impl SourceRules {
    /// Adds or replaces the rule for `source`.
    pub fn insert(&mut self, source: impl Into<String>, rule: SourceRule) -> &mut Self {
        self.rules.insert(source.into(), rule);
        self
    }

    /// Sets the class of data from sources without a rule (the seed's is internal).
    pub fn set_default_class(&mut self, class: DataClass) -> &mut Self {
        self.default_class = class;
        self
    }

    /// The rule that applies to `context`: the source's, its class raised to the context's
    /// floor (a regulated floor is redacted, never tokenized).
    pub fn rule_for(&self, context: &Context) -> SourceRule {
        let mut rule = self.source_rule(context);
        if let Some(floor) = context.at_least
            && floor > rule.class
        {
            rule.class = floor;
            rule.tokenizable &= floor < DataClass::Regulated;
        }
        rule
    }

    fn source_rule(&self, context: &Context) -> SourceRule {
        match self.rules.get(&context.source) {
            Some(rule) => rule.clone(),
            None => SourceRule {
                class: self.default_class,
                data_type: DataType::GENERAL,
                recorded_as: if context.source.is_empty() {
                    "unknown".to_owned()
                } else {
                    context.source.clone()
                },
                tokenizable: true,
                retention_days: None,
            },
        }
    }
}

/// A classified piece of data (the seed's `ClassifiedData`, without the data itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ClassifiedData {
    /// The class: the maximum of the source's class and every finding's.
    pub classification: DataClass,
    /// The type of the most sensitive finding, or the source's type.
    pub data_type: DataType,
    /// Where it came from.
    pub source: String,
    /// False when anything in it must be redacted rather than tokenized.
    pub can_be_tokenized: bool,
    /// How long it may be kept, if limited.
    pub retention_days: Option<u32>,
    /// The class the source alone gives.
    pub source_class: DataClass,
    /// What was found, by position.
    #[serde(skip)]
    pub findings: Vec<Finding>,
}

/// Classifies data by content (a [`Detector`]) and source ([`SourceRules`]).
///
/// Unlike the seed's sketch, which returns the first pattern class that matches and only
/// then looks at the source, the class here is the maximum of both, so a source rule can
/// never lower a classification (an e-mail address in a financial report stays restricted).
///
/// ```
/// use skills_security::{Classifier, Context, DataClass, DataType};
///
/// let classifier = Classifier::new();
/// let c = classifier.classify_text("SSN on file: 224-30-8280", &Context::default());
/// assert_eq!(c.classification, DataClass::Regulated);
/// assert_eq!(c.data_type, DataType::SSN);
/// assert!(!c.can_be_tokenized);
///
/// let c = classifier.classify_text("Q3 planning notes", &Context::source("crm_deal"));
/// assert_eq!((c.classification, c.source.as_str()), (DataClass::Confidential, "crm"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Classifier {
    detector: Detector,
    sources: SourceRules,
}

impl Classifier {
    /// Built-in recognizers and the seed's source rules.
    pub fn new() -> Classifier {
        Classifier::default()
    }

    /// With this detector (for host recognizers).
    pub fn with_detector(mut self, detector: Detector) -> Classifier {
        self.detector = detector;
        self
    }

    /// With these source rules.
    pub fn with_sources(mut self, sources: SourceRules) -> Classifier {
        self.sources = sources;
        self
    }

    /// The detector.
    pub fn detector(&self) -> &Detector {
        &self.detector
    }

    /// The source rules.
    pub fn sources(&self) -> &SourceRules {
        &self.sources
    }

    /// Classifies one text.
    pub fn classify_text(&self, text: &str, context: &Context) -> ClassifiedData {
        let findings = self.detector.detect(text);
        self.summarize(&findings, context)
    }

    pub(crate) fn summarize(&self, findings: &Findings, context: &Context) -> ClassifiedData {
        let rule = self.sources.rule_for(context);
        summarize_with(findings.all(), &rule)
    }
}

pub(crate) fn summarize_with(findings: &[Finding], rule: &SourceRule) -> ClassifiedData {
    let top = findings
        .iter()
        .max_by(|a, b| a.class.cmp(&b.class).then(b.start.cmp(&a.start)));
    let (classification, data_type) = match top {
        Some(f) if f.class >= rule.class => (f.class, f.data_type.clone()),
        _ => (rule.class, rule.data_type.clone()),
    };
    ClassifiedData {
        classification,
        data_type,
        source: rule.recorded_as.clone(),
        can_be_tokenized: rule.tokenizable && findings.iter().all(|f| f.tokenizable),
        retention_days: rule.retention_days,
        source_class: rule.class,
        findings: findings.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_source_rules() {
        let c = Classifier::new();
        let fin = c.classify_text("quarterly numbers", &Context::source("financial_report"));
        assert_eq!(
            (
                fin.classification,
                fin.data_type.as_str(),
                fin.source.as_str()
            ),
            (DataClass::Restricted, "FINANCIAL", "financial_system")
        );
        let plain = c.classify_text("hello", &Context::default());
        assert_eq!(
            (
                plain.classification,
                plain.data_type.as_str(),
                plain.source.as_str()
            ),
            (DataClass::Internal, "GENERAL", "unknown")
        );
    }

    #[test]
    fn a_source_never_lowers_the_class() {
        let c = Classifier::new();
        let x = c.classify_text("DOB: 1961-11-20", &Context::source("crm_deal"));
        assert_eq!(x.classification, DataClass::Regulated);
        assert_eq!(x.data_type, DataType::DATE_OF_BIRTH);
        let y = c.classify_text("mail a@example.com", &Context::source("financial_report"));
        assert_eq!(y.classification, DataClass::Restricted);
    }

    #[test]
    fn keyword_classes() {
        let c = Classifier::new();
        let k = |t: &str| c.classify_text(t, &Context::default()).classification;
        assert_eq!(k("Diagnosis: flu."), DataClass::Regulated);
        assert_eq!(k("Our revenue doubled."), DataClass::Restricted);
        assert_eq!(k("This memo is confidential."), DataClass::Restricted);
        assert_eq!(k("Contact name: Ann"), DataClass::Confidential);
        assert_eq!(k("The weather is nice."), DataClass::Internal);
    }

    #[test]
    fn configurable_sources() {
        let mut rules = SourceRules::default();
        rules.insert(
            "press_release",
            SourceRule {
                class: DataClass::Public,
                data_type: DataType::GENERAL,
                recorded_as: "press".into(),
                tokenizable: true,
                retention_days: Some(30),
            },
        );
        let c = Classifier::new().with_sources(rules);
        let x = c.classify_text("We launched.", &Context::source("press_release"));
        assert_eq!(
            (x.classification, x.retention_days),
            (DataClass::Public, Some(30))
        );
    }
}
