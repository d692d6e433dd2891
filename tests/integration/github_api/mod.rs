//! A stand-in for GitHub's REST API on 127.0.0.1. Every request is checked against the
//! OpenAPI subset (`openapi`) and for the headers GitHub requires; Git objects live in a bare
//! repository seeded from the test's repository, so blobs, trees, commits and refs behave as
//! on GitHub and a test can read the published commit back. Pull requests, comments, labels,
//! reactions, collaborator permissions and workflow jobs are kept in memory. Scripted answers
//! (rate limits, refusals) are served first when their method and path match.

mod openapi;

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use base64::Engine as _;
use git2::{ObjectType, Oid, Repository, Signature};
use serde_json::{Value, json};

use crate::http::{HttpRequest, HttpResponse, Server};

pub use openapi::OpenApi;

/// The repository the stand-in serves.
pub const REPOSITORY: &str = "octo-org/demo";
/// The token it accepts.
pub const TOKEN: &str = "ghs_0123456789abcdefghijklmnopqrstuvwxyzAB";

/// A request as the stand-in saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: Vec<(String, String)>,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
    /// The OpenAPI operation id, when the request matched one.
    pub operation: Option<String>,
}

/// A pull request.
#[derive(Debug, Clone, PartialEq)]
pub struct Pull {
    pub number: u64,
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    pub draft: bool,
    pub open: bool,
}

/// An answer served instead of the normal one, once.
pub struct Scripted {
    pub method: &'static str,
    pub path_suffix: String,
    pub response: HttpResponse,
}

/// Everything the stand-in holds.
pub struct State {
    pub git: Repository,
    pub seen: Vec<Seen>,
    /// Requests that broke the OpenAPI description or lacked a required header.
    pub problems: Vec<String>,
    pub pulls: Vec<Pull>,
    /// (issue number, body).
    pub comments: Vec<(u64, String)>,
    /// (comment id, content).
    pub reactions: Vec<(u64, String)>,
    /// (issue number, labels).
    pub labels: Vec<(u64, Vec<String>)>,
    /// login → (permission, role_name).
    pub permissions: BTreeMap<String, (String, String)>,
    /// Pull requests that exist before the test (number → head repository).
    pub foreign_pulls: BTreeMap<u64, String>,
    pub jobs: Value,
    /// Job id → its log, served as GitHub does: a redirect to a blob URL holding the text.
    pub job_logs: BTreeMap<u64, String>,
    pub scripted: VecDeque<Scripted>,
    next_number: u64,
}

/// The running stand-in.
pub struct FakeGithub {
    pub url: String,
    state: Arc<Mutex<State>>,
    _server: Server,
    _dir: tempfile::TempDir,
}

impl FakeGithub {
    /// Start a stand-in whose Git data is a bare copy of every branch of `seed`.
    pub fn start(seed: &Path) -> FakeGithub {
        let dir = tempfile::tempdir().unwrap();
        let git = Repository::init_bare(dir.path().join("server.git")).unwrap();
        git.remote_anonymous(seed.to_str().unwrap())
            .unwrap()
            .fetch(&["+refs/heads/*:refs/heads/*"], None, None)
            .unwrap();
        // The seed's branch is `main` on GitHub, whatever `git init` named it here.
        let head = Repository::open(seed)
            .unwrap()
            .head()
            .unwrap()
            .target()
            .unwrap();
        git.reference("refs/heads/main", head, true, "seed")
            .unwrap();
        let state = Arc::new(Mutex::new(State {
            git,
            seen: Vec::new(),
            problems: Vec::new(),
            pulls: Vec::new(),
            comments: Vec::new(),
            reactions: Vec::new(),
            labels: Vec::new(),
            permissions: BTreeMap::new(),
            foreign_pulls: BTreeMap::new(),
            jobs: json!({"total_count": 0, "jobs": []}),
            job_logs: BTreeMap::new(),
            scripted: VecDeque::new(),
            next_number: 100,
        }));
        let openapi = Arc::new(OpenApi::load());
        let shared = Arc::clone(&state);
        let server = Server::start(move |request| {
            let mut state = shared.lock().unwrap_or_else(|p| p.into_inner());
            handle(&mut state, &openapi, request)
        });
        FakeGithub {
            url: server.url.clone(),
            state,
            _server: server,
            _dir: dir,
        }
    }

    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Give `login` this permission (and role) on the repository.
    pub fn grant(&self, login: &str, permission: &str) {
        self.state().permissions.insert(
            login.to_owned(),
            (permission.to_owned(), permission.to_owned()),
        );
    }

    /// Answer the next matching request with `response` instead.
    pub fn script(&self, method: &'static str, path_suffix: &str, response: HttpResponse) {
        self.state().scripted.push_back(Scripted {
            method,
            path_suffix: path_suffix.to_owned(),
            response,
        });
    }

    /// The files of `commit` (path → bytes), read from the stand-in's object store.
    pub fn files_of(&self, commit: &str) -> BTreeMap<String, Vec<u8>> {
        let state = self.state();
        let commit = state
            .git
            .find_commit(Oid::from_str(commit).unwrap())
            .unwrap();
        let mut files = BTreeMap::new();
        commit
            .tree()
            .unwrap()
            .walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
                if entry.kind() == Some(ObjectType::Blob) {
                    let blob = state.git.find_blob(entry.id()).unwrap();
                    files.insert(
                        format!("{dir}{}", entry.name().unwrap()),
                        blob.content().to_vec(),
                    );
                }
                git2::TreeWalkResult::Ok
            })
            .unwrap();
        files
    }

    /// (parents, message) of `commit`.
    pub fn commit(&self, commit: &str) -> (Vec<String>, String) {
        let state = self.state();
        let commit = state
            .git
            .find_commit(Oid::from_str(commit).unwrap())
            .unwrap();
        (
            commit.parent_ids().map(|id| id.to_string()).collect(),
            commit.message().unwrap().to_owned(),
        )
    }

    /// The commit a branch points to.
    pub fn branch(&self, name: &str) -> Option<String> {
        let state = self.state();
        let reference = state.git.find_reference(&format!("refs/heads/{name}"));
        reference
            .ok()
            .and_then(|r| r.target())
            .map(|oid| oid.to_string())
    }

    /// `METHOD path` of every request, in order.
    pub fn calls(&self) -> Vec<String> {
        self.state()
            .seen
            .iter()
            .map(|s| format!("{} {}", s.method, s.path))
            .collect()
    }
}

fn not_found() -> HttpResponse {
    HttpResponse::json(
        404,
        &json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}),
    )
}

fn invalid(message: &str) -> HttpResponse {
    HttpResponse::json(
        422,
        &json!({"message": message, "documentation_url": "https://docs.github.com/rest"}),
    )
}

fn handle(state: &mut State, openapi: &OpenApi, request: HttpRequest) -> HttpResponse {
    // Where a log download redirects to: blob storage, outside the REST API.
    if let Some(id) = request.path.strip_prefix("/_blob/job-logs/") {
        state.seen.push(Seen {
            method: request.method.clone(),
            path: request.path.clone(),
            query: request.query.clone(),
            headers: request.headers.clone(),
            body: Value::Null,
            operation: None,
        });
        return match id.parse().ok().and_then(|id: u64| state.job_logs.get(&id)) {
            Some(log) => HttpResponse {
                status: 200,
                headers: vec![("Content-Type".to_owned(), "text/plain".to_owned())],
                body: log.clone().into_bytes(),
            },
            None => not_found(),
        };
    }
    let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let checked = openapi.check(&request);
    state.seen.push(Seen {
        method: request.method.clone(),
        path: request.path.clone(),
        query: request.query.clone(),
        headers: request.headers.clone(),
        body: body.clone(),
        operation: checked.as_ref().ok().map(|m| m.operation.id.clone()),
    });
    let header = |name: &str| request.headers.get(name).cloned().unwrap_or_default();
    let mut problems = Vec::new();
    if header("user-agent").is_empty() {
        problems.push("no User-Agent".to_owned());
    }
    if header("accept") != "application/vnd.github+json" {
        problems.push(format!("Accept is {:?}", header("accept")));
    }
    if header("x-github-api-version") != "2022-11-28" {
        problems.push(format!(
            "X-GitHub-Api-Version is {:?}",
            header("x-github-api-version")
        ));
    }
    let reject = |state: &mut State, problems: Vec<String>, status: u16| {
        let text = format!(
            "{} {}: {}",
            request.method,
            request.path,
            problems.join("; ")
        );
        state.problems.push(text.clone());
        HttpResponse::json(status, &json!({"message": text}))
    };
    let matched = match checked {
        Ok(matched) => matched,
        Err(errors) => {
            problems.extend(errors);
            return reject(state, problems, 422);
        }
    };
    if !problems.is_empty() {
        return reject(state, problems, 400);
    }
    if header("authorization") != format!("Bearer {TOKEN}") {
        return HttpResponse::json(401, &json!({"message": "Bad credentials"}));
    }
    let scripted = state
        .scripted
        .iter()
        .position(|s| s.method == request.method && request.path.ends_with(&s.path_suffix));
    if let Some(scripted) = scripted.and_then(|at| state.scripted.remove(at)) {
        return scripted.response;
    }
    let prefix = format!("/repos/{REPOSITORY}/");
    if !request.path.starts_with(&prefix) {
        return not_found();
    }
    let id = matched.operation.id.clone();
    let params = matched.params;
    let param = |index: usize| params.get(index).cloned().unwrap_or_default();
    match id.as_str() {
        "git/get-commit" => get_commit(state, &param(2)),
        "git/create-blob" => create_blob(state, &body),
        "git/create-tree" => create_tree(state, &body),
        "git/create-commit" => create_commit(state, &body),
        "git/get-ref" => get_ref(state, &param(2)),
        "git/create-ref" => create_ref(state, &body),
        "git/update-ref" => update_ref(state, &param(2), &body),
        "pulls/list" => list_pulls(state, &request.query),
        "pulls/get" => get_pull(state, &param(2)),
        "pulls/create" => create_pull(state, &body),
        "pulls/update" => update_pull(state, &param(2), &body),
        "issues/add-labels" => {
            let labels: Vec<String> = serde_json::from_value(body["labels"].clone()).unwrap();
            state
                .labels
                .push((param(2).parse().unwrap(), labels.clone()));
            HttpResponse::json(
                200,
                &json!(
                    labels
                        .iter()
                        .map(|l| json!({"name": l}))
                        .collect::<Vec<_>>()
                ),
            )
        }
        "issues/create-comment" => {
            let issue: u64 = param(2).parse().unwrap();
            state
                .comments
                .push((issue, body["body"].as_str().unwrap().to_owned()));
            let id = 9000 + state.comments.len() as u64;
            HttpResponse::json(
                201,
                &json!({"id": id, "html_url": format!("https://github.example/{REPOSITORY}/issues/{issue}#issuecomment-{id}")}),
            )
        }
        "reactions/create-for-issue-comment" => {
            state.reactions.push((
                param(2).parse().unwrap(),
                body["content"].as_str().unwrap().to_owned(),
            ));
            HttpResponse::json(201, &json!({"id": 1, "content": body["content"]}))
        }
        "repos/get-collaborator-permission-level" => {
            let (permission, role) = state
                .permissions
                .get(&param(2))
                .cloned()
                .unwrap_or_else(|| ("none".to_owned(), "none".to_owned()));
            HttpResponse::json(
                200,
                &json!({"permission": permission, "role_name": role, "user": {"login": param(2)}}),
            )
        }
        "actions/list-jobs-for-workflow-run" => HttpResponse::json(200, &state.jobs),
        "actions/download-job-logs-for-workflow-run" => {
            if state.job_logs.contains_key(&param(2).parse().unwrap_or(0)) {
                HttpResponse {
                    status: 302,
                    headers: vec![(
                        "Location".to_owned(),
                        format!("/_blob/job-logs/{}", param(2)),
                    )],
                    body: Vec::new(),
                }
            } else {
                not_found()
            }
        }
        _ => not_found(),
    }
}

fn oid(text: &str) -> Option<Oid> {
    Oid::from_str(text).ok().filter(|_| text.len() == 40)
}

fn get_commit(state: &State, sha: &str) -> HttpResponse {
    let Some(commit) = oid(sha).and_then(|o| state.git.find_commit(o).ok()) else {
        return not_found();
    };
    HttpResponse::json(
        200,
        &json!({
            "sha": commit.id().to_string(),
            "tree": {"sha": commit.tree_id().to_string()},
            "parents": commit.parent_ids().map(|p| json!({"sha": p.to_string()})).collect::<Vec<_>>(),
            "message": commit.message().unwrap_or_default(),
        }),
    )
}

fn create_blob(state: &State, body: &Value) -> HttpResponse {
    let content = body["content"].as_str().unwrap_or_default();
    let bytes = match body["encoding"].as_str() {
        Some("base64") => match base64::engine::general_purpose::STANDARD.decode(content) {
            Ok(bytes) => bytes,
            Err(_) => return invalid("content is not base64"),
        },
        _ => content.as_bytes().to_vec(),
    };
    let sha = state.git.blob(&bytes).unwrap().to_string();
    HttpResponse::json(201, &json!({"sha": sha, "url": format!("blobs/{sha}")}))
}

fn create_tree(state: &State, body: &Value) -> HttpResponse {
    let base = match body["base_tree"].as_str() {
        Some(sha) => match oid(sha).and_then(|o| state.git.find_tree(o).ok()) {
            Some(tree) => tree,
            None => return invalid("base_tree is not a tree"),
        },
        None => {
            let empty = state.git.treebuilder(None).unwrap().write().unwrap();
            state.git.find_tree(empty).unwrap()
        }
    };
    let mut update = git2::build::TreeUpdateBuilder::new();
    for entry in body["tree"].as_array().into_iter().flatten() {
        let path = entry["path"].as_str().unwrap_or_default();
        let mode = i32::from_str_radix(entry["mode"].as_str().unwrap_or("100644"), 8).unwrap();
        match &entry["sha"] {
            Value::Null if entry.get("content").is_none() => {
                update.remove(path);
            }
            Value::String(sha) => match oid(sha).filter(|o| state.git.find_blob(*o).is_ok()) {
                Some(blob) => {
                    update.upsert(path, blob, mode_of(mode));
                }
                None => return invalid(&format!("tree.sha {sha} is not a blob")),
            },
            _ => {
                let content = entry["content"].as_str().unwrap_or_default();
                let blob = state.git.blob(content.as_bytes()).unwrap();
                update.upsert(path, blob, mode_of(mode));
            }
        }
    }
    let sha = update
        .create_updated(&state.git, &base)
        .unwrap()
        .to_string();
    HttpResponse::json(201, &json!({"sha": sha, "tree": [], "truncated": false}))
}

fn mode_of(mode: i32) -> git2::FileMode {
    match mode {
        0o100755 => git2::FileMode::BlobExecutable,
        0o120000 => git2::FileMode::Link,
        _ => git2::FileMode::Blob,
    }
}

fn create_commit(state: &State, body: &Value) -> HttpResponse {
    let Some(tree) = body["tree"]
        .as_str()
        .and_then(oid)
        .and_then(|o| state.git.find_tree(o).ok())
    else {
        return invalid("tree is not a tree");
    };
    let mut parents = Vec::new();
    for parent in body["parents"].as_array().into_iter().flatten() {
        match parent
            .as_str()
            .and_then(oid)
            .and_then(|o| state.git.find_commit(o).ok())
        {
            Some(commit) => parents.push(commit),
            None => return invalid("a parent is not a commit"),
        }
    }
    // GitHub makes the commit as the token's identity when no author is given, and signs it.
    let signature = Signature::now(
        "github-actions[bot]",
        "41898282+github-actions[bot]@users.noreply.github.com",
    )
    .unwrap();
    let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
    let message = body["message"].as_str().unwrap_or_default();
    let sha = state
        .git
        .commit(None, &signature, &signature, message, &tree, &refs)
        .unwrap()
        .to_string();
    HttpResponse::json(
        201,
        &json!({"sha": sha, "verification": {"verified": true, "reason": "valid"}}),
    )
}

fn get_ref(state: &State, name: &str) -> HttpResponse {
    match state.git.find_reference(&format!("refs/{name}")) {
        Ok(reference) => HttpResponse::json(
            200,
            &json!({"ref": format!("refs/{name}"), "object": {"sha": reference.target().unwrap().to_string(), "type": "commit"}}),
        ),
        Err(_) => not_found(),
    }
}

fn create_ref(state: &State, body: &Value) -> HttpResponse {
    let name = body["ref"].as_str().unwrap_or_default();
    if state.git.find_reference(name).is_ok() {
        return invalid("Reference already exists");
    }
    let Some(target) = body["sha"].as_str().and_then(oid) else {
        return invalid("sha is not a commit");
    };
    state.git.reference(name, target, false, "create").unwrap();
    HttpResponse::json(
        201,
        &json!({"ref": name, "object": {"sha": target.to_string()}}),
    )
}

fn update_ref(state: &State, name: &str, body: &Value) -> HttpResponse {
    let full = format!("refs/{name}");
    if state.git.find_reference(&full).is_err() {
        return invalid("Reference does not exist");
    }
    let Some(target) = body["sha"].as_str().and_then(oid) else {
        return invalid("sha is not a commit");
    };
    state.git.reference(&full, target, true, "update").unwrap();
    HttpResponse::json(
        200,
        &json!({"ref": full, "object": {"sha": target.to_string()}}),
    )
}

fn pull_json(pull: &Pull) -> Value {
    let owner = REPOSITORY.split('/').next().unwrap();
    json!({
        "number": pull.number,
        "html_url": format!("https://github.example/{REPOSITORY}/pull/{}", pull.number),
        "state": if pull.open { "open" } else { "closed" },
        "title": pull.title,
        "body": pull.body,
        "draft": pull.draft,
        "head": {"ref": pull.head, "label": format!("{owner}:{}", pull.head), "repo": {"full_name": REPOSITORY}},
        "base": {"ref": pull.base, "repo": {"full_name": REPOSITORY}},
    })
}

fn list_pulls(state: &State, query: &[(String, String)]) -> HttpResponse {
    let get = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let owner = REPOSITORY.split('/').next().unwrap();
    let head = get("head");
    let open_only = get("state").as_deref() != Some("all");
    let pulls: Vec<Value> = state
        .pulls
        .iter()
        .filter(|p| !open_only || p.open)
        .filter(|p| {
            head.as_ref()
                .is_none_or(|h| *h == format!("{owner}:{}", p.head))
        })
        .map(pull_json)
        .collect();
    HttpResponse::json(200, &json!(pulls))
}

fn get_pull(state: &State, number: &str) -> HttpResponse {
    let number: u64 = number.parse().unwrap_or(0);
    if let Some(head) = state.foreign_pulls.get(&number) {
        return HttpResponse::json(
            200,
            &json!({"number": number, "head": {"repo": if head.is_empty() { Value::Null } else { json!({"full_name": head}) }}, "base": {"repo": {"full_name": REPOSITORY}}}),
        );
    }
    match state.pulls.iter().find(|p| p.number == number) {
        Some(pull) => HttpResponse::json(200, &pull_json(pull)),
        None => not_found(),
    }
}

fn create_pull(state: &mut State, body: &Value) -> HttpResponse {
    let text = |key: &str| body[key].as_str().unwrap_or_default().to_owned();
    let head = text("head");
    if state
        .git
        .find_reference(&format!("refs/heads/{head}"))
        .is_err()
    {
        return invalid("Validation Failed: head does not exist");
    }
    if state
        .git
        .find_reference(&format!("refs/heads/{}", text("base")))
        .is_err()
    {
        return invalid("Validation Failed: base does not exist");
    }
    if state.pulls.iter().any(|p| p.open && p.head == head) {
        return invalid(&format!("A pull request already exists for {head}."));
    }
    state.next_number += 1;
    let pull = Pull {
        number: state.next_number,
        head,
        base: text("base"),
        title: text("title"),
        body: text("body"),
        draft: body["draft"].as_bool().unwrap_or(false),
        open: true,
    };
    let json = pull_json(&pull);
    state.pulls.push(pull);
    HttpResponse::json(201, &json)
}

fn update_pull(state: &mut State, number: &str, body: &Value) -> HttpResponse {
    let number: u64 = number.parse().unwrap_or(0);
    let Some(pull) = state.pulls.iter_mut().find(|p| p.number == number) else {
        return not_found();
    };
    if let Some(title) = body["title"].as_str() {
        pull.title = title.to_owned();
    }
    if let Some(text) = body["body"].as_str() {
        pull.body = text.to_owned();
    }
    HttpResponse::json(200, &pull_json(pull))
}
