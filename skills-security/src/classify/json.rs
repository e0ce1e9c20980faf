//! Structured data: every scalar of a JSON value is classified by its path, with its key as
//! context (a `"dob"` key makes its date a date of birth, an `"ssn"` key its number an SSN),
//! and the whole by its highest class.

use serde::Serialize;
use serde_json::Value;

use super::{ClassifiedData, Classifier, Context, SourceRule, summarize_with};
use crate::detect::{Detector, Finding, Findings};

/// The classification of one field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FieldClass {
    /// The field's JSON pointer (RFC 6901), `""` for a scalar at the root.
    pub path: String,
    /// True when the findings are in the object key at `path`, not its value.
    pub in_key: bool,
    /// Its classification (offsets in `findings` are into the field's text).
    pub classified: ClassifiedData,
}

/// The classification of a JSON value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct JsonClassification {
    /// The whole: its class is the highest of any field's (or the source's class).
    pub overall: ClassifiedData,
    /// Every scalar field (and every key with findings), in document order.
    pub fields: Vec<FieldClass>,
}

/// Appends a JSON pointer segment.
pub(crate) fn push_segment(path: &mut String, segment: &str) {
    path.push('/');
    for c in segment.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// The text a scalar is classified as, if it is one that can hold data.
pub(crate) fn scalar_text(v: &Value) -> Option<std::borrow::Cow<'_, str>> {
    match v {
        Value::String(s) => Some(std::borrow::Cow::Borrowed(s)),
        Value::Number(n) => Some(std::borrow::Cow::Owned(n.to_string())),
        _ => None,
    }
}

/// Detects in a field's `text` with `key` as the context before it: the detector sees
/// `key: text`, and findings are mapped back into `text` (clipped to it).
pub(crate) fn detect_field(
    detector: &Detector,
    key: Option<&str>,
    text: &str,
    buf: &mut String,
    scratch: &mut Findings,
) -> Vec<Finding> {
    let Some(key) = key else {
        detector.detect_into(text, scratch);
        return scratch.all().to_vec();
    };
    buf.clear();
    buf.push_str(key);
    buf.push_str(": ");
    let offset = buf.len();
    buf.push_str(text);
    detector.detect_into(buf, scratch);
    scratch
        .all()
        .iter()
        .filter(|f| f.end > offset)
        .map(|f| {
            let mut f = f.clone();
            f.start = f.start.max(offset) - offset;
            f.end -= offset;
            f
        })
        .collect()
}

/// One step of the iterative walk (no recursion, so depth cannot overflow the stack).
pub(crate) enum Step<'v> {
    Enter {
        value: &'v Value,
        key: Option<&'v str>,
        path_len: usize,
        segment: Option<String>,
    },
}

/// Visits every scalar and key of `value` in document order with its path and key context.
pub(crate) fn walk<'v>(value: &'v Value, mut visit: impl FnMut(&str, Option<&'v str>, Visit<'v>)) {
    let mut path = String::new();
    let mut stack = vec![Step::Enter {
        value,
        key: None,
        path_len: 0,
        segment: None,
    }];
    while let Some(Step::Enter {
        value,
        key,
        path_len,
        segment,
    }) = stack.pop()
    {
        path.truncate(path_len);
        if let Some(seg) = &segment {
            push_segment(&mut path, seg);
        }
        match value {
            Value::Object(map) => {
                let here = path.len();
                for (k, _) in map.iter() {
                    let mut p = path.clone();
                    push_segment(&mut p, k);
                    visit(&p, Some(k), Visit::Key(k));
                }
                for (k, v) in map.iter().rev() {
                    stack.push(Step::Enter {
                        value: v,
                        key: Some(k),
                        path_len: here,
                        segment: Some(k.clone()),
                    });
                }
            }
            Value::Array(items) => {
                let here = path.len();
                for (i, v) in items.iter().enumerate().rev() {
                    stack.push(Step::Enter {
                        value: v,
                        key,
                        path_len: here,
                        segment: Some(i.to_string()),
                    });
                }
            }
            other => visit(&path, key, Visit::Scalar(other)),
        }
    }
}

/// What [`walk`] visits.
pub(crate) enum Visit<'v> {
    Key(&'v str),
    Scalar(&'v Value),
}

impl Classifier {
    /// Classifies every field of a JSON value and the whole.
    ///
    /// ```
    /// use serde_json::json;
    /// use skills_security::{Classifier, Context, DataClass};
    ///
    /// let doc = json!({"name": "Beth", "contact": {"email": "a@example.com", "dob": "1961-11-20"}});
    /// let c = Classifier::new().classify_json(&doc, &Context::default());
    /// assert_eq!(c.overall.classification, DataClass::Regulated);
    /// let dob = c.fields.iter().find(|f| f.path == "/contact/dob").unwrap();
    /// assert_eq!(dob.classified.data_type.as_str(), "DATE_OF_BIRTH");
    /// ```
    pub fn classify_json(&self, value: &Value, context: &Context) -> JsonClassification {
        let rule: SourceRule = self.sources.rule_for(context);
        let mut fields = Vec::new();
        let mut buf = String::new();
        let mut scratch = Findings::default();
        let mut all: Vec<Finding> = Vec::new();
        walk(value, |path, key, visit| match visit {
            Visit::Key(k) => {
                self.detector.detect_into(k, &mut scratch);
                if !scratch.is_empty() {
                    let found = scratch.all().to_vec();
                    all.extend(found.iter().cloned());
                    fields.push(FieldClass {
                        path: path.to_owned(),
                        in_key: true,
                        classified: summarize_with(&found, &rule),
                    });
                }
            }
            Visit::Scalar(v) => {
                if let Some(text) = scalar_text(v) {
                    let found = detect_field(&self.detector, key, &text, &mut buf, &mut scratch);
                    all.extend(found.iter().cloned());
                    fields.push(FieldClass {
                        path: path.to_owned(),
                        in_key: false,
                        classified: summarize_with(&found, &rule),
                    });
                }
            }
        });
        let mut overall = summarize_with(&all, &rule);
        // Offsets of the overall findings refer to different fields; keep them per field only.
        overall.findings.clear();
        JsonClassification { overall, fields }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::DataClass;

    #[test]
    fn keys_give_context() {
        let doc = json!({"customer": {"ssn": "647 36 9554", "dob": "May 04, 1976", "points": 85356, "tags": ["x", "a@example.com"]}});
        let c = Classifier::new().classify_json(&doc, &Context::default());
        let get = |p: &str| c.fields.iter().find(|f| f.path == p && !f.in_key).unwrap();
        assert_eq!(get("/customer/ssn").classified.data_type.as_str(), "SSN");
        assert_eq!(
            get("/customer/dob").classified.data_type.as_str(),
            "DATE_OF_BIRTH"
        );
        assert_eq!(
            get("/customer/points").classified.classification,
            DataClass::Internal
        );
        assert_eq!(
            get("/customer/tags/1").classified.data_type.as_str(),
            "EMAIL"
        );
        let f = &get("/customer/ssn").classified.findings[0];
        assert_eq!((f.start, f.end), (0, 11));
        assert_eq!(c.overall.classification, DataClass::Regulated);
    }

    #[test]
    fn pointers_are_escaped_and_keys_checked() {
        let doc = json!({"a/b~c": 1, "rbrown@example.com": true});
        let c = Classifier::new().classify_json(&doc, &Context::default());
        assert!(c.fields.iter().any(|f| f.path == "/a~1b~0c"));
        assert!(
            c.fields
                .iter()
                .any(|f| f.in_key && f.classified.data_type.as_str() == "EMAIL")
        );
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let mut v = json!("a@example.com");
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        let c = Classifier::new().classify_json(&v, &Context::default());
        assert_eq!(c.fields.len(), 1);
        // Dropping a deeply nested Value is serde_json's recursion, not ours: leak it in the test.
        std::mem::forget(v);
    }
}
