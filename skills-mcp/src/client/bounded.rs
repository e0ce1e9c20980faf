//! A reader that refuses a line (one JSON-RPC message on stdio) longer than a cap.
//!
//! Threat: a server that sends one endless message, filling memory before any parser sees
//! it. Guarantee: the bytes between two newlines never exceed the cap; past it the read
//! fails (`InvalidData`), the transport closes, and [`LineCap::tripped`] tells the client it
//! was the cap, so the pending request ends with [`Error::TooLarge`](crate::Error::TooLarge)
//! instead of a generic transport error.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// Wraps a reader; see the module docs.
#[derive(Debug)]
pub(crate) struct LineCap<R> {
    inner: R,
    max: usize,
    current: usize,
    tripped: Arc<AtomicBool>,
}

impl<R> LineCap<R> {
    pub(crate) fn new(inner: R, max: usize) -> (Self, Arc<AtomicBool>) {
        let tripped = Arc::new(AtomicBool::new(false));
        (
            LineCap {
                inner,
                max,
                current: 0,
                tripped: tripped.clone(),
            },
            tripped,
        )
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineCap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.tripped.load(Ordering::Relaxed) {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "message over the size limit",
            )));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let mut over = false;
                for &byte in &buf.filled()[before..] {
                    if byte == b'\n' {
                        this.current = 0;
                    } else {
                        this.current += 1;
                        over |= this.current > this.max;
                    }
                }
                if over {
                    // A failed read hands back nothing (the `AsyncRead` contract).
                    buf.set_filled(before);
                    this.tripped.store(true, Ordering::Relaxed);
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "message over the size limit",
                    )));
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    #[tokio::test]
    async fn a_long_line_trips_the_cap_and_short_lines_pass() {
        let (mut ok, _) = LineCap::new(&b"abc\ndef\n"[..], 3);
        let mut out = Vec::new();
        assert!(ok.read_to_end(&mut out).await.is_ok());
        let (mut long, tripped) = LineCap::new(&b"abcd\n"[..], 3);
        assert!(long.read_to_end(&mut Vec::new()).await.is_err());
        assert!(tripped.load(Ordering::Relaxed));
    }
}
