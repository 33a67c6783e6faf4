//! The documentation holds together: README.md stays a short front door
//! (at most 250 lines), every relative link or image in README.md and
//! docs/*.md points at a file that exists, every `#anchor` at a heading of
//! its target page (GitHub's slugs), and every docs page is reachable from
//! the README. Links inside fenced code blocks and inline code are not
//! links and are not checked.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const README_MAX_LINES: usize = 250;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// README.md and every docs/*.md, sorted.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut v = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v
}

/// The lines of a markdown file outside fenced code blocks (``` or ~~~):
/// `(line number, text)`.
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ['`', '~'].into_iter().find_map(|c| {
            let n = trimmed.chars().take_while(|&x| x == c).count();
            (n >= 3).then_some((c, n))
        });
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                continue;
            }
            (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n && trimmed.trim_end().chars().all(|x| x == c) => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            (None, None) => {}
        }
        out.push((i + 1, line.to_string()));
    }
    out
}

/// `a `b` c` → `a     c`: code spans replaced by spaces, so that text in
/// them is neither a link nor markup.
fn blank_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '`' {
            let n = chars[i..].iter().take_while(|&&c| c == '`').count();
            // The closing run of exactly n backticks.
            let mut j = i + n;
            let mut close = None;
            while j < chars.len() {
                if chars[j] == '`' {
                    let m = chars[j..].iter().take_while(|&&c| c == '`').count();
                    if m == n {
                        close = Some(j);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            match close {
                Some(j) => {
                    out.extend(std::iter::repeat_n(' ', j + n - i));
                    i = j + n;
                }
                None => {
                    out.extend(&chars[i..i + n]);
                    i += n;
                }
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Every `](target)` of a line outside its code spans: the target without
/// an optional title.
fn link_targets(line: &str) -> Vec<String> {
    let line = blank_code_spans(line);
    let mut v = Vec::new();
    let mut rest = line.as_str();
    while let Some(k) = rest.find("](") {
        let after = &rest[k + 2..];
        // Balanced parentheses inside the target (rare, but legal).
        let mut depth = 0usize;
        let mut end = None;
        for (j, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = Some(j);
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        let Some(end) = end else { break };
        let inner = after[..end].trim();
        let target = inner.split_whitespace().next().unwrap_or("");
        let target = target.trim_start_matches('<').trim_end_matches('>');
        v.push(target.to_string());
        rest = &after[end..];
    }
    v
}

/// The text GitHub shows for a heading's markup: code spans keep their
/// text, links their label.
fn heading_text(h: &str) -> String {
    let mut s = h.replace('`', "");
    // [label](target) → label
    while let Some(open) = s.find('[') {
        let Some(mid) = s[open..].find("](").map(|m| open + m) else { break };
        let Some(close) = s[mid..].find(')').map(|c| mid + c) else { break };
        s = format!("{}{}{}", &s[..open], &s[open + 1..mid], &s[close + 1..]);
    }
    s
}

/// GitHub's anchor for a heading: lower case; letters, digits, `_` and
/// `-` kept; each space a `-`; everything else dropped.
fn slug(heading: &str) -> String {
    heading_text(heading.trim())
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a markdown file's headings, with GitHub's `-1`, `-2`
/// suffixes for repeated ones.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let t = line.trim_start();
        let level = t.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&level) || !t[level..].starts_with(' ') {
            continue;
        }
        let base = slug(t[level..].trim().trim_end_matches('#'));
        let mut a = base.clone();
        let mut n = 0;
        while seen.contains(&a) {
            n += 1;
            a = format!("{base}-{n}");
        }
        seen.insert(a);
    }
    seen
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

#[test]
fn readme_is_short() {
    let root = root();
    let text = fs::read_to_string(root.join("README.md")).expect("README.md");
    let n = text.lines().count();
    assert!(
        n <= README_MAX_LINES,
        "README.md has {n} lines, more than {README_MAX_LINES}: it is the front door; move the detail into docs/"
    );
}

#[test]
fn relative_links_and_anchors_resolve() {
    let root = root();
    let mut problems = Vec::new();
    for page in pages(&root) {
        let text = fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        let dir = page.parent().expect("a page's directory");
        for (line_no, line) in prose_lines(&text) {
            for target in link_targets(&line) {
                let lower = target.to_ascii_lowercase();
                if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("mailto:") {
                    continue;
                }
                let here = format!("{}:{line_no}: link `{target}`", rel(&root, &page));
                if target.is_empty() {
                    problems.push(format!("{here}: empty target"));
                    continue;
                }
                let (path_part, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let file = if path_part.is_empty() { page.clone() } else { dir.join(path_part) };
                if !file.exists() {
                    problems.push(format!("{here}: {} does not exist", rel(&root, &file)));
                    continue;
                }
                let Some(anchor) = anchor else { continue };
                if file.extension().is_none_or(|e| e != "md") {
                    problems.push(format!("{here}: an anchor into a file that is not markdown"));
                    continue;
                }
                let target_text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                let found = anchors(&target_text);
                if !found.contains(anchor) {
                    problems.push(format!(
                        "{here}: no heading with anchor #{anchor} in {} (its anchors: {})",
                        rel(&root, &file),
                        found.iter().map(|a| format!("#{a}")).collect::<Vec<_>>().join(" ")
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{} broken link(s):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn every_docs_page_is_linked_from_the_readme() {
    let root = root();
    let readme = fs::read_to_string(root.join("README.md")).expect("README.md");
    let linked: BTreeSet<PathBuf> = prose_lines(&readme)
        .iter()
        .flat_map(|(_, line)| link_targets(line))
        .filter_map(|t| {
            let path = t.split('#').next().unwrap_or("").to_string();
            (!path.is_empty()).then(|| root.join(path).canonicalize().ok()).flatten()
        })
        .collect();
    let missing: Vec<String> = pages(&root)
        .into_iter()
        .skip(1)
        .filter(|p| !linked.contains(&p.canonicalize().expect("docs page")))
        .map(|p| rel(&root, &p))
        .collect();
    assert!(
        missing.is_empty(),
        "docs pages not linked from README.md (add them to its documentation map): {}",
        missing.join(", ")
    );
}

#[test]
fn the_checker_reads_markdown_as_github_does() {
    assert_eq!(slug("`[geometry]` — organisation of the flash array"), "geometry--organisation-of-the-flash-array");
    assert_eq!(slug("Overrides: `--set PATH=VALUE`"), "overrides---set-pathvalue");
    assert_eq!(slug("A drive's life: retention and aging"), "a-drives-life-retention-and-aging");
    assert_eq!(slug("8. Drive states"), "8-drive-states");
    assert_eq!(slug("`[ftl.map_cache]` — the map"), "ftlmap_cache--the-map");
    assert_eq!(slug("See [the page](x.md) now"), "see-the-page-now");
    assert_eq!(link_targets("a [b](c.md#d) and ![e](f.png \"title\") g"), vec!["c.md#d", "f.png"]);
    assert_eq!(blank_code_spans("x `[a](b)` y"), "x          y");
    assert!(link_targets("x `[a](b)` y").is_empty());
    let md = "# T\n\n```sh\n[no](link.md)\n# not a heading\n```\n\n## Same\n## Same\n[yes](real.md)\n";
    let lines = prose_lines(md);
    assert!(lines.iter().all(|(_, l)| !l.contains("no](")));
    assert!(lines.iter().any(|(n, l)| *n == 10 && l.contains("real.md")));
    let a = anchors(md);
    assert!(a.contains("t") && a.contains("same") && a.contains("same-1") && !a.contains("not-a-heading"), "{a:?}");
}
