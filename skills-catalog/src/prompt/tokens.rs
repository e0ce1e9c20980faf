//! Counting tokens for budgets, through a trait the host backs with its model's tokenizer.

/// Counts the tokens a text costs in the host's model.
pub trait TokenCounter: Send + Sync {
    /// The number of tokens `text` encodes to.
    fn count(&self, text: &str) -> usize;
}

/// The default estimator when no tokenizer is plugged in: one token per four characters,
/// rounded up, and never fewer than the number of whitespace-separated words. It errs on
/// the high side for English prose (real BPE tokenizers average a little over four
/// characters per token), so a budget it approves fits.
#[derive(Debug, Clone, Copy, Default)]
pub struct EstimatedTokens;

impl TokenCounter for EstimatedTokens {
    fn count(&self, text: &str) -> usize {
        let chars = text.chars().count();
        let words = text.split_whitespace().count();
        chars.div_ceil(4).max(words)
    }
}

/// A budget for rendered text.
#[derive(Clone, Copy)]
pub enum Budget<'a> {
    /// At most this many characters (Unicode scalar values).
    Chars(usize),
    /// At most this many tokens, as `counter` counts them.
    Tokens(usize, &'a dyn TokenCounter),
}

impl std::fmt::Debug for Budget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::Chars(n) => write!(f, "Chars({n})"),
            Budget::Tokens(n, _) => write!(f, "Tokens({n})"),
        }
    }
}

impl Budget<'_> {
    /// What `text` costs in this budget's unit.
    pub fn cost(&self, text: &str) -> usize {
        match self {
            Budget::Chars(_) => text.chars().count(),
            Budget::Tokens(_, counter) => counter.count(text),
        }
    }

    /// The limit.
    pub fn limit(&self) -> usize {
        match self {
            Budget::Chars(n) | Budget::Tokens(n, _) => *n,
        }
    }

    /// Whether `text` fits.
    pub fn fits(&self, text: &str) -> bool {
        self.cost(text) <= self.limit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_rounds_up_and_counts_words() {
        assert_eq!(EstimatedTokens.count(""), 0);
        assert_eq!(EstimatedTokens.count("abcde"), 2);
        assert_eq!(EstimatedTokens.count("a b c d e"), 5);
        assert_eq!(Budget::Chars(3).cost("héé"), 3);
        assert!(Budget::Tokens(2, &EstimatedTokens).fits("abcdefgh"));
        assert!(!Budget::Tokens(1, &EstimatedTokens).fits("abcdefgh"));
    }
}
