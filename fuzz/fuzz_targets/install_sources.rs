#![no_main]
//! The git-host and npm sources on arbitrary server answers: no panic, and a package that
//! comes back has only safe relative paths. The fuzz input is the sequence of response bodies
//! (separated by `\n--\n`), served in request order with status 200.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use libfuzzer_sys::fuzz_target;
use skills_install::{
    GitHubSource, HttpClient, HttpError, HttpRequest, HttpResponse, NpmSource, SkillSource,
    check_package_path,
};

struct Replay {
    bodies: Mutex<Vec<Vec<u8>>>,
}

#[async_trait]
impl HttpClient for Replay {
    async fn request(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let mut bodies = self.bodies.lock().map_err(|_| HttpError::new("poisoned"))?;
        if bodies.is_empty() {
            return Err(HttpError::new("no more answers"));
        }
        let mut body = bodies.remove(0);
        body.truncate(usize::try_from(request.max_body_bytes).unwrap_or(usize::MAX));
        Ok(HttpResponse::new(200, Vec::new(), body))
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let mut bodies = Vec::new();
    let mut remaining = rest;
    while let Some(at) = remaining.windows(4).position(|w| w == b"\n--\n") {
        bodies.push(remaining[..at].to_vec());
        remaining = &remaining[at + 4..];
    }
    bodies.push(remaining.to_vec());
    let http = Arc::new(Replay { bodies: Mutex::new(bodies) });
    let source: Box<dyn SkillSource> = if selector & 1 == 0 {
        Box::new(GitHubSource::new(http, "http://git.example"))
    } else {
        Box::new(NpmSource::new(http, "http://registry.example"))
    };
    let locator = if selector & 1 == 0 { "acme/skills/pdf" } else { "pdf-skill" };
    futures::executor::block_on(async {
        match selector >> 1 & 3 {
            0 => {
                let _ = source.search("pdf").await;
            }
            1 => {
                let _ = source.versions(locator).await;
            }
            _ => {
                if let Ok(package) = source.fetch(locator, None).await {
                    for file in package.files() {
                        assert!(check_package_path(&file.path).is_ok(), "{}", file.path);
                    }
                }
            }
        }
    });
});
