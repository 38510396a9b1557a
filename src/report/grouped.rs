//! Several servers' reports as one document (`[[server]]` entries checked together):
//! each format's way of putting them side by side. Rendering only: which servers ran and
//! what each found is decided before this.

use std::path::Path;

use termcolor::{NoColor, WriteColor};

use super::{junit, Format, Report};
use crate::lockfile;

/// Several servers' reports as one document: the human and markdown reports under a
/// heading per server, GitHub annotations one after the other (each names its
/// lockfile), JSON as `{"covenant_version", "servers": [{"name", "lockfile", "report"}]}`,
/// SARIF as one run per server (`automationDetails.id` = `mcp-covenant/NAME/`), JUnit as
/// one testsuite per server. A server that failed (its `error:` line is on stderr) is
/// listed with `"error": true` / as failed.
pub fn check(
    reports: &[(&str, &Path, Option<&Report<'_>>)],
    format: Format,
    out: &mut dyn WriteColor,
) -> std::io::Result<()> {
    let text = |r: &Report<'_>, f: Format| -> std::io::Result<String> {
        let mut buf = NoColor::new(Vec::new());
        super::render(r, f, &mut buf)?;
        Ok(String::from_utf8_lossy(&buf.into_inner()).into_owned())
    };
    match format {
        Format::Human | Format::Markdown | Format::Github => {
            for (i, (name, lockfile, report)) in reports.iter().enumerate() {
                let heading = match format {
                    Format::Human => format!(
                        "{}== server {} ({})\n",
                        if i > 0 { "\n" } else { "" },
                        name,
                        lockfile.display()
                    ),
                    Format::Markdown => format!("## Server `{name}`\n\n"),
                    _ => String::new(),
                };
                out.set_color(termcolor::ColorSpec::new().set_bold(true))?;
                out.write_all(heading.as_bytes())?;
                out.reset()?;
                match report {
                    // One comment: the servers share GitHub's size limit.
                    Some(r) if format == Format::Markdown => out.write_all(
                        super::markdown_within(r, super::MARKDOWN_BUDGET / reports.len())
                            .as_bytes(),
                    )?,
                    Some(r) => super::render(r, format, out)?,
                    None if format == Format::Github => {}
                    None => out.write_all(b"could not be checked: see the error above\n\n")?,
                }
            }
        }
        Format::Json => {
            let mut doc = format!(
                "{{\n  \"covenant_version\": {},\n  \"servers\": [",
                serde_json::json!(lockfile::COVENANT_VERSION)
            );
            for (i, (name, lockfile, report)) in reports.iter().enumerate() {
                doc.push_str(if i > 0 { ",\n    " } else { "\n    " });
                let name = serde_json::json!(name);
                let lock = serde_json::json!(lockfile.display().to_string());
                match report {
                    Some(r) => doc.push_str(&format!(
                        "{{ \"name\": {name}, \"lockfile\": {lock}, \"report\": {} }}",
                        text(r, format)?.trim_end()
                    )),
                    None => doc.push_str(&format!(
                        "{{ \"name\": {name}, \"lockfile\": {lock}, \"error\": true }}"
                    )),
                }
            }
            doc.push_str(&format!(
                "\n  ],\n  \"report_version\": {}\n}}\n",
                super::REPORT_VERSION
            ));
            out.write_all(doc.as_bytes())?;
        }
        Format::Sarif => {
            let mut docs = Vec::new();
            for (name, _, report) in reports {
                if let Some(r) = report {
                    docs.push((name.to_string(), text(r, format)?));
                }
            }
            out.write_all(merge_sarif(docs.into_iter())?.as_bytes())?;
        }
        Format::Junit => {
            let reports: Vec<(&str, Option<&Report<'_>>)> =
                reports.iter().map(|(name, _, r)| (*name, *r)).collect();
            out.write_all(junit::grouped(&reports).as_bytes())?;
        }
    }
    Ok(())
}

/// One SARIF document from several, each run tagged `automationDetails.id =
/// mcp-covenant/NAME/` (GitHub code scanning tells runs of one tool apart by it).
pub fn merge_sarif(docs: impl Iterator<Item = (String, String)>) -> std::io::Result<String> {
    let mut merged: Option<serde_json::Value> = None;
    let mut runs = Vec::new();
    for (name, text) in docs {
        let mut one: serde_json::Value =
            serde_json::from_str(&text).map_err(std::io::Error::other)?;
        if let Some(serde_json::Value::Array(rs)) = one.get_mut("runs").map(serde_json::Value::take)
        {
            for mut run in rs {
                run["automationDetails"] =
                    serde_json::json!({ "id": format!("mcp-covenant/{name}/") });
                runs.push(run);
            }
        }
        merged.get_or_insert(one);
    }
    let mut doc = merged.unwrap_or_else(|| {
        serde_json::json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0"
        })
    });
    doc["runs"] = serde_json::Value::Array(runs);
    let mut text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    text.push('\n');
    Ok(text)
}
