//! How long a 429 asks the client to wait: `retry-after-ms` (milliseconds), else
//! `Retry-After` as delta-seconds or as an HTTP date (RFC 9110 IMF-fixdate).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use skills_http::HttpResponse;

/// The wait the response asks for, measured against `now` for a date; `None` when it says
/// nothing readable. A date in the past is a wait of zero.
pub(crate) fn retry_after(response: &HttpResponse, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = response
        .header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = response.header("retry-after")?.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| Duration::try_from_secs_f64(secs).ok())
            .flatten();
    }
    let at = http_date(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn http_date(value: &str) -> Option<u64> {
    let mut parts = value.split_ascii_whitespace();
    let _weekday = parts.next()?;
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(year, month, i64::try_from(day).ok()?);
    u64::try_from(days)
        .ok()?
        .checked_mul(86_400)?
        .checked_add(h * 3600 + m * 60 + s)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(name: &str, value: &str) -> HttpResponse {
        HttpResponse::new(429, vec![(name.into(), value.into())], Vec::new())
    }

    #[test]
    fn every_form_is_read() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770);
        assert_eq!(
            retry_after(&with("Retry-After", "3"), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after(&with("retry-after-ms", "250"), now),
            Some(Duration::from_millis(250))
        );
        // 1994-11-06 08:49:37 is 784111777.
        assert_eq!(
            retry_after(&with("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(
                &with("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"),
                now + Duration::from_secs(60)
            ),
            Some(Duration::ZERO)
        );
        for junk in ["-1", "soon", "NaN", "Sun, 32 Nov 1994 08:49:37 GMT", ""] {
            assert_eq!(retry_after(&with("Retry-After", junk), now), None, "{junk}");
        }
        assert_eq!(retry_after(&HttpResponse::default(), now), None);
    }
}
