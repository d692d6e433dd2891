//! Checking requests against GitHub's REST description: the committed subset of
//! `@octokit/openapi` (`tests/fixtures/github/openapi-subset.json`, trimmed by
//! `scripts/openapi-subset.py`). A request must match a documented method and path, use only
//! documented query parameters, and carry a body valid against the operation's request schema
//! (validated with the `jsonschema` crate, draft 2020-12).
//!
//! OpenAPI 3.0 marks nullable fields with `nullable: true`, which JSON Schema does not know;
//! the loader rewrites it as a type union with `null` (so `"sha": null`, GitHub's way to delete
//! a file in a tree, is valid, as GitHub documents).

use jsonschema::{Draft, Validator};
use regex::Regex;
use serde_json::{Map, Value, json};

use crate::http::HttpRequest;

const SUBSET: &str = include_str!("../../fixtures/github/openapi-subset.json");

/// One documented operation.
pub struct Operation {
    pub id: String,
    method: String,
    path: Regex,
    /// (name, required) of the query parameters.
    query: Vec<(String, bool)>,
    /// Whether a body is required, and its validator.
    body: Option<(bool, Validator)>,
}

/// The operations of the subset.
pub struct OpenApi {
    operations: Vec<Operation>,
}

/// A request that matched an operation, with its path parameters.
pub struct Matched<'a> {
    pub operation: &'a Operation,
    pub params: Vec<String>,
}

impl OpenApi {
    pub fn load() -> OpenApi {
        let mut doc: Value = serde_json::from_str(SUBSET).unwrap();
        nullable_to_union(&mut doc);
        let components = doc["components"].clone();
        let mut operations = Vec::new();
        for (template, item) in doc["paths"].as_object().unwrap() {
            let path_params: Vec<Value> = item
                .get("parameters")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (method, operation) in item.as_object().unwrap() {
                if method == "parameters" {
                    continue;
                }
                let params: Vec<Value> = path_params
                    .iter()
                    .chain(
                        operation
                            .get("parameters")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten(),
                    )
                    .map(|p| resolve(&doc, p))
                    .collect();
                let query = params
                    .iter()
                    .filter(|p| p["in"] == "query")
                    .map(|p| {
                        (
                            p["name"].as_str().unwrap().to_owned(),
                            p["required"] == true,
                        )
                    })
                    .collect();
                let body = operation.get("requestBody").map(|body| {
                    let body = resolve(&doc, body);
                    let schema = body["content"]["application/json"]["schema"].clone();
                    let root = json!({"components": components, "allOf": [schema]});
                    let validator = jsonschema::options()
                        .with_draft(Draft::Draft202012)
                        .build(&root)
                        .unwrap();
                    (body["required"] == true, validator)
                });
                operations.push(Operation {
                    id: operation["operationId"].as_str().unwrap().to_owned(),
                    method: method.to_ascii_uppercase(),
                    path: template_regex(template),
                    query,
                    body,
                });
            }
        }
        OpenApi { operations }
    }

    /// The operation `request` matches, or every problem with it.
    pub fn check<'a>(&'a self, request: &HttpRequest) -> Result<Matched<'a>, Vec<String>> {
        let Some((operation, params)) = self.operations.iter().find_map(|op| {
            if op.method != request.method {
                return None;
            }
            let captures = op.path.captures(&request.path)?;
            let params = captures
                .iter()
                .skip(1)
                .map(|m| crate::http::decode(m.map(|m| m.as_str()).unwrap_or_default()))
                .collect();
            Some((op, params))
        }) else {
            return Err(vec![format!(
                "{} {} is not an operation of the OpenAPI subset",
                request.method, request.path
            )]);
        };
        let mut problems = Vec::new();
        for (name, _) in &request.query {
            if !operation.query.iter().any(|(known, _)| known == name) {
                problems.push(format!(
                    "{}: query parameter {name:?} is not documented",
                    operation.id
                ));
            }
        }
        for (name, required) in &operation.query {
            if *required && !request.query.iter().any(|(n, _)| n == name) {
                problems.push(format!(
                    "{}: query parameter {name:?} is required",
                    operation.id
                ));
            }
        }
        match (&operation.body, request.body.is_empty()) {
            (Some((true, _)), true) => {
                problems.push(format!("{}: the request body is required", operation.id));
            }
            (Some((_, validator)), false) => match serde_json::from_slice::<Value>(&request.body) {
                Ok(body) => {
                    for error in validator.iter_errors(&body) {
                        problems.push(format!(
                            "{}: body {}: {error}",
                            operation.id,
                            error.instance_path()
                        ));
                    }
                }
                Err(err) => problems.push(format!("{}: body is not JSON: {err}", operation.id)),
            },
            (None, false) => problems.push(format!("{}: takes no request body", operation.id)),
            _ => {}
        }
        if problems.is_empty() {
            Ok(Matched { operation, params })
        } else {
            Err(problems)
        }
    }
}

/// `{name}` matches one path segment; `{ref}` (a git ref such as `heads/efix/1-ab`) the rest.
fn template_regex(template: &str) -> Regex {
    let mut pattern = String::from("^");
    for (index, part) in template.split('{').enumerate() {
        if index == 0 {
            pattern.push_str(&regex::escape(part));
            continue;
        }
        let (name, literal) = part.split_once('}').unwrap();
        pattern.push_str(if name == "ref" { "(.+)" } else { "([^/]+)" });
        pattern.push_str(&regex::escape(literal));
    }
    pattern.push('$');
    Regex::new(&pattern).unwrap()
}

/// Follow a `$ref` to a component, once.
fn resolve(doc: &Value, node: &Value) -> Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => doc
            .pointer(reference.trim_start_matches('#'))
            .cloned()
            .unwrap_or_else(|| panic!("dangling {reference}")),
        None => node.clone(),
    }
}

fn nullable_to_union(node: &mut Value) {
    match node {
        Value::Object(map) => {
            for child in map.values_mut() {
                nullable_to_union(child);
            }
            if map.remove("nullable") == Some(Value::Bool(true)) {
                match map.get("type").cloned() {
                    Some(Value::String(kind)) => {
                        map.insert("type".to_owned(), json!([kind, "null"]));
                        if let Some(Value::Array(values)) = map.get_mut("enum") {
                            values.push(Value::Null);
                        }
                    }
                    _ => {
                        let inner = std::mem::take(map);
                        let mut wrapped = Map::new();
                        wrapped.insert(
                            "anyOf".to_owned(),
                            json!([Value::Object(inner), {"type": "null"}]),
                        );
                        *map = wrapped;
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(nullable_to_union),
        _ => {}
    }
}
