//! A validator for the part of JSON Schema (draft 2020-12) that schemars writes: `type`,
//! `properties`, `required`, `additionalProperties`, `items`, `prefixItems`, `minItems`,
//! `maxItems`, `minimum`, `format` (integer and number formats), `const`, `enum`, `oneOf`,
//! `anyOf`, `allOf` and `$ref` into `$defs`. A keyword it does not know is an error, so a schema
//! that grows beyond this subset cannot pass unchecked. (A general validator crate would bring
//! URL and Unicode-normalisation crates into the build for the same answers.)

use serde_json::Value;

/// Keywords that only describe.
const ANNOTATIONS: [&str; 5] = ["$schema", "title", "description", "default", "$defs"];

/// Checks `doc` against `schema`; every violation as `path: what`.
pub fn validate(schema: &Value, doc: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    check(schema, schema, doc, "$", &mut errors);
    errors
}

fn check(root: &Value, schema: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    let s = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return errors.push(format!("{path}: no value is allowed here")),
        Value::Object(s) => s,
        other => return errors.push(format!("{path}: the schema {other} is not a schema")),
    };
    for (key, k) in s {
        match key.as_str() {
            k if ANNOTATIONS.contains(&k) => {}
            "$ref" => {
                let name =
                    k.as_str().and_then(|r| r.strip_prefix("#/$defs/")).expect("a local $ref");
                check(root, &root["$defs"][name], v, path, errors);
            }
            "type" => {
                let types: Vec<&str> = match k {
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    t => vec![t.as_str().expect("a type name")],
                };
                if !types.iter().any(|t| is_type(v, t)) {
                    errors.push(format!(
                        "{path}: {} is not of type {}",
                        brief(v),
                        types.join(" or ")
                    ));
                }
            }
            "properties" => {
                for (name, sub) in k.as_object().expect("properties") {
                    if let Some(x) = v.get(name) {
                        check(root, sub, x, &format!("{path}.{name}"), errors);
                    }
                }
            }
            "required" => {
                for name in k.as_array().expect("required").iter().filter_map(Value::as_str) {
                    if v.is_object() && v.get(name).is_none() {
                        errors.push(format!("{path}: the required field {name} is missing"));
                    }
                }
            }
            "additionalProperties" => {
                let known = s.get("properties").and_then(Value::as_object);
                for (name, x) in v.as_object().into_iter().flatten() {
                    if !known.is_some_and(|p| p.contains_key(name)) {
                        check(root, k, x, &format!("{path}.{name}"), errors);
                    }
                }
            }
            "items" => {
                let skip = s.get("prefixItems").and_then(Value::as_array).map_or(0, Vec::len);
                for (i, x) in v.as_array().into_iter().flatten().enumerate().skip(skip) {
                    check(root, k, x, &format!("{path}[{i}]"), errors);
                }
            }
            "prefixItems" => {
                for (i, (sub, x)) in k
                    .as_array()
                    .expect("prefixItems")
                    .iter()
                    .zip(v.as_array().into_iter().flatten())
                    .enumerate()
                {
                    check(root, sub, x, &format!("{path}[{i}]"), errors);
                }
            }
            "minItems" | "maxItems" => {
                let (n, bound) =
                    (v.as_array().map(Vec::len), k.as_u64().expect("a count") as usize);
                if n.is_some_and(|n| if key == "minItems" { n < bound } else { n > bound }) {
                    errors.push(format!("{path}: {} items break {key} {bound}", n.unwrap_or(0)));
                }
            }
            "minimum" => {
                if v.as_f64().is_some_and(|x| x < k.as_f64().expect("a bound")) {
                    errors.push(format!("{path}: {v} is below the minimum {k}"));
                }
            }
            "format" => format(k.as_str().expect("a format"), v, path, errors),
            "const" if v != k => errors.push(format!("{path}: {} is not {k}", brief(v))),
            "const" => {}
            "enum" if !k.as_array().expect("enum").contains(v) => {
                errors.push(format!("{path}: {} is not one of {k}", brief(v)))
            }
            "enum" => {}
            "oneOf" | "anyOf" | "allOf" => {
                let each: Vec<Vec<String>> = k
                    .as_array()
                    .expect("subschemas")
                    .iter()
                    .map(|sub| validate_at(root, sub, v, path))
                    .collect();
                let passing = each.iter().filter(|e| e.is_empty()).count();
                let ok = match key.as_str() {
                    "oneOf" => passing == 1,
                    "anyOf" => passing >= 1,
                    _ => passing == each.len(),
                };
                if !ok {
                    errors.push(format!(
                        "{path}: {} matches {passing} of the {} choices of {key}",
                        brief(v),
                        each.len()
                    ));
                    // Why the nearest choice failed (one that fits the value's shape), for a path into it.
                    let here = format!("{path}: ");
                    let nearest = each.into_iter().filter(|e| !e.is_empty()).min_by_key(|e| {
                        (e.iter().filter(|m| m.starts_with(&here)).count(), e.len())
                    });
                    errors.extend(nearest.unwrap_or_default());
                }
            }
            other => {
                errors.push(format!("{path}: the validator does not know the keyword {other}"))
            }
        }
    }
}

fn validate_at(root: &Value, schema: &Value, v: &Value, path: &str) -> Vec<String> {
    let mut errors = Vec::new();
    check(root, schema, v, path, &mut errors);
    errors
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|x| x.fract() == 0.0),
        other => panic!("unknown type {other}"),
    }
}

/// The integer formats schemars writes, and the number formats (any number).
fn format(f: &str, v: &Value, path: &str, errors: &mut Vec<String>) {
    let fits = match f {
        "double" | "float" => true,
        "uint" | "uint64" => v.is_u64(),
        "uint8" => v.as_u64().is_some_and(|x| x <= u8::MAX as u64),
        "uint16" => v.as_u64().is_some_and(|x| x <= u16::MAX as u64),
        "uint32" => v.as_u64().is_some_and(|x| x <= u32::MAX as u64),
        "int" | "int64" => v.is_i64(),
        "int32" => v.as_i64().is_some_and(|x| i32::try_from(x).is_ok()),
        other => {
            return errors.push(format!("{path}: the validator does not know the format {other}"));
        }
    };
    if !fits && v.is_number() {
        errors.push(format!("{path}: {v} does not fit the format {f}"));
    }
}

fn brief(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}
