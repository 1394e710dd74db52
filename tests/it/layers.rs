//! The shape of the code, read as Rust (with `syn`), not as text: the
//! judgement's layers import only downwards and in no circle, each layer
//! keeps its invariant, and no function or table in production code runs
//! over 150 lines without a reason (ARCHITECTURE.md, "Invariants").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

use crate::support::root;

/// The judgement's layers in `crates/analysis/src`, lowest first. A file's
/// layer is its first folder; `lib.rs`, the pipeline, sits above them all.
const LAYERS: [&str; 3] = ["measure", "judge", "advise"];

/// The longest a function or a table may run without a `// long:` reason.
const MAX_LINES: usize = 150;

/// One file of a crate: its module path (`["judge", "slo"]` for
/// `judge/slo/mod.rs`) and its syntax.
struct Module {
    path: Vec<String>,
    file: PathBuf,
    text: String,
    syntax: syn::File,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn modules(src: &Path) -> Vec<Module> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let rel = file.strip_prefix(src).expect("under src");
            let mut path: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if matches!(path.last().map(String::as_str), Some("mod" | "lib")) {
                path.pop();
            }
            let text = std::fs::read_to_string(&file).expect("readable");
            let syntax =
                syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            Module {
                path,
                file,
                text,
                syntax,
            }
        })
        .collect()
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        (a.path().is_ident("cfg") || a.path().is_ident("test"))
            && (a.path().is_ident("test")
                || a.parse_args::<syn::Path>()
                    .is_ok_and(|p| p.is_ident("test")))
    })
}

/// Every path a file's production code names that starts at `crate`,
/// `super` or `self`, or at one of the file's own child modules.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                self.found.push(path);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                self.found.push(path);
            }
            syn::UseTree::Glob(_) => self.found.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// Paths inside macro calls (`format!("{}", crate::text::x(..))`),
    /// which syn leaves as tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                self.tokens(g.stream());
            }
            if let TokenTree::Ident(id) = &trees[i]
                && (id == "crate" || id == "super")
            {
                let mut path = vec![id.to_string()];
                let mut j = i + 1;
                while j + 2 < trees.len() + 1 {
                    let colons = matches!((&trees.get(j), &trees.get(j + 1)),
                        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                            if a.as_char() == ':' && b.as_char() == ':');
                    match trees.get(j + 2) {
                        Some(TokenTree::Ident(next)) if colons => {
                            path.push(next.to_string());
                            j += 3;
                        }
                        _ => break,
                    }
                }
                self.found.push(path);
                i = j;
                continue;
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_cfg_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if !is_cfg_test(&u.attrs) {
            self.use_tree(&mut Vec::new(), &u.tree);
        }
    }
    /// `pub(crate)` and `pub(super)` name a module but import nothing.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.found
            .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

/// What resolving a path needs: the crate's modules, and for each the
/// names its `use` items bring in (so that a path through a re-export
/// lands where the item is defined, not in the file that re-exports it).
struct Crate {
    known: BTreeSet<Vec<String>>,
    uses: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
}

fn use_names(
    tree: &syn::UseTree,
    prefix: &mut Vec<String>,
    out: &mut BTreeMap<String, Vec<String>>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_names(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.insert(n.ident.to_string(), path);
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            path.push(r.ident.to_string());
            out.insert(r.rename.to_string(), path);
        }
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                use_names(tree, prefix, out);
            }
        }
    }
}

impl Crate {
    fn new(modules: &[Module]) -> Crate {
        let known = modules.iter().map(|m| m.path.clone()).collect();
        let uses = modules
            .iter()
            .map(|m| {
                let mut names = BTreeMap::new();
                for item in &m.syntax.items {
                    if let syn::Item::Use(u) = item
                        && !is_cfg_test(&u.attrs)
                    {
                        use_names(&u.tree, &mut Vec::new(), &mut names);
                    }
                }
                (m.path.clone(), names)
            })
            .collect();
        Crate { known, uses }
    }

    /// The file a path lands in: the longest prefix that is a module of
    /// the crate, after `crate`, `super` and `self` are resolved from
    /// `from`, and through the `use` items of the file it reaches. `None`
    /// for a path outside the crate.
    fn resolve(&self, from: &[String], path: &[String], depth: usize) -> Option<Vec<String>> {
        let mut at: Vec<String>;
        let mut rest = path;
        match path.first().map(String::as_str) {
            Some("crate") => {
                at = Vec::new();
                rest = &path[1..];
            }
            Some("self" | "super") => {
                at = from.to_vec();
                while let Some(first) = rest.first() {
                    match first.as_str() {
                        "self" => {}
                        "super" => {
                            at.pop()?;
                        }
                        _ => break,
                    }
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut child = from.to_vec();
                child.push(first.to_string());
                if !self.known.contains(&child) {
                    return None;
                }
                at = from.to_vec();
            }
            None => return None,
        }
        while let Some(segment) = rest.first() {
            let mut deeper = at.clone();
            deeper.push(segment.clone());
            if !self.known.contains(&deeper) {
                break;
            }
            at = deeper;
            rest = &rest[1..];
        }
        // A name the file brought in with `use`: follow it.
        if let Some(name) = rest.first()
            && let Some(target) = self.uses.get(&at).and_then(|u| u.get(name))
            && depth < 8
        {
            let mut through = target.clone();
            through.extend(rest[1..].iter().cloned());
            return self.resolve(&at, &through, depth + 1);
        }
        Some(at)
    }
}

/// The file-level import graph of a crate's production code.
fn import_graph(modules: &[Module]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let krate = Crate::new(modules);
    let mut graph = BTreeMap::new();
    for module in modules {
        let mut paths = Paths::default();
        paths.visit_file(&module.syntax);
        let edges: BTreeSet<Vec<String>> = paths
            .found
            .iter()
            .filter_map(|p| krate.resolve(&module.path, p, 0))
            .filter(|target| *target != module.path)
            .collect();
        graph.insert(module.path.clone(), edges);
    }
    graph
}

/// Strongly connected components of more than one file (Tarjan).
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'g Vec<String>, usize>,
        low: BTreeMap<&'g Vec<String>, usize>,
        stack: Vec<&'g Vec<String>>,
        on: BTreeSet<&'g Vec<String>>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g Vec<String>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let Some((w, _)) = s.graph.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.join("::"));
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn analysis() -> Vec<Module> {
    modules(&root().join("crates/analysis/src"))
}

fn layer(path: &[String]) -> Option<usize> {
    match path.first() {
        None => Some(LAYERS.len()),
        Some(first) => LAYERS.iter().position(|l| l == first),
    }
}

/// The production code of a file, without its comments: what comes
/// before its unit tests.
fn code(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_file_of_the_judgement_is_in_a_layer() {
    let strays: Vec<String> = analysis()
        .iter()
        .filter(|m| layer(&m.path).is_none())
        .map(|m| m.file.display().to_string())
        .collect();
    assert!(
        strays.is_empty(),
        "files of crates/analysis outside measure/, judge/ and advise/: {strays:?}"
    );
}

#[test]
fn the_judgement_imports_only_downwards() {
    let graph = import_graph(&analysis());
    let mut upwards = Vec::new();
    for (from, targets) in &graph {
        for to in targets {
            if let (Some(a), Some(b)) = (layer(from), layer(to))
                && b > a
            {
                upwards.push(format!("{} -> {}", from.join("::"), to.join("::")));
            }
        }
    }
    assert!(
        upwards.is_empty(),
        "imports from a lower layer to a higher one (order: {LAYERS:?}, then lib.rs): {upwards:#?}"
    );
}

#[test]
fn the_judgement_has_no_import_circle() {
    let graph = import_graph(&analysis());
    assert!(graph.len() > 30, "only {} files read", graph.len());
    assert!(
        graph.values().map(BTreeSet::len).sum::<usize>() > 50,
        "the import graph is too thin to be real: {graph:?}"
    );
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "files that import each other in a circle: {found:#?}"
    );
}

/// The graph and circle finder are themselves tested: a circle made by
/// hand is found, through `super`, `crate` and a macro's tokens.
#[test]
fn the_circle_finder_finds_a_circle() {
    let parse = |path: &[&str], text: &str| Module {
        path: path.iter().map(|s| s.to_string()).collect(),
        file: PathBuf::from(path.join("/")),
        text: text.to_string(),
        syntax: syn::parse_file(text).expect("parses"),
    };
    let modules = [
        parse(&[], "mod a; mod b;"),
        parse(&["a"], "use super::b::f; pub fn g() {}"),
        parse(
            &["b"],
            "pub fn f() { let _ = format!(\"{}\", crate::a::g()); }",
        ),
        parse(&["c"], "#[cfg(test)] mod tests { use crate::a::g; }"),
    ];
    let graph = import_graph(&modules);
    assert_eq!(
        circles(&graph),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
    assert!(
        graph[&vec!["c".to_string()]].is_empty(),
        "unit tests do not count"
    );
}

/// "measure never reads an objective": the figures do not depend on what
/// the user wants them to be.
#[test]
fn measure_never_reads_an_objective() {
    for module in analysis().iter().filter(|m| layer(&m.path) == Some(0)) {
        let code = &code(&module.text);
        let reads_slo = code.match_indices(".slo").any(|(i, _)| {
            !code[i + 4..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        });
        assert!(
            !code.contains("SloThresholds") && !reads_slo,
            "{} reads an objective",
            module.file.display()
        );
    }
}

/// "advise never computes a figure": it reads the judged report and the
/// measured rows, never the store, the rate engine or the bundle.
#[test]
fn advise_reads_no_store() {
    for module in analysis().iter().filter(|m| layer(&m.path) == Some(2)) {
        let code = &code(&module.text);
        for krate in ["vllm_lens_store", "vllm_lens_query", "vllm_lens_bundle"] {
            assert!(
                !code.contains(krate),
                "{} uses {krate}: advise reads figures, it does not compute them",
                module.file.display()
            );
        }
    }
}

/// Render and the model know nothing of the analysis: the model crate
/// depends on no crate of the judgement, render on the model alone.
#[test]
fn render_depends_on_the_model_alone() {
    for (manifest, allowed) in [
        ("crates/model/Cargo.toml", &["vllm-lens-store"][..]),
        ("crates/render/Cargo.toml", &["vllm-lens-model"][..]),
    ] {
        let text = std::fs::read_to_string(root().join(manifest)).expect(manifest);
        let deps: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split(['.', ' ', '=']).next())
            .filter(|name| name.starts_with("vllm-lens-"))
            .collect();
        assert!(
            !deps.is_empty() || allowed.is_empty(),
            "{manifest}: {deps:?}"
        );
        for dep in deps {
            assert!(allowed.contains(&dep), "{manifest} depends on {dep}");
        }
    }
}

/// An item of production code longer than [`MAX_LINES`].
struct Long {
    what: String,
    first: usize,
    lines: usize,
}

#[derive(Default)]
struct Lengths {
    found: Vec<Long>,
}

fn first_line(attrs: &[syn::Attribute], start: proc_macro2::Span) -> usize {
    attrs
        .iter()
        .map(|a| a.pound_token.span.start().line)
        .chain([start.start().line])
        .min()
        .unwrap_or(0)
}

impl Lengths {
    fn function(&mut self, attrs: &[syn::Attribute], sig: &syn::Signature, block: &syn::Block) {
        let start = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().end().line;
        let lines = end + 1 - start;
        if lines > MAX_LINES {
            self.found.push(Long {
                what: format!("fn {}", sig.ident),
                first: first_line(attrs, sig.fn_token.span),
                lines,
            });
        }
    }

    /// A table is long if it runs over the limit and holds fewer entries
    /// than lines (one entry per line is a list, not a function).
    fn table(
        &mut self,
        attrs: &[syn::Attribute],
        name: &syn::Ident,
        start: proc_macro2::Span,
        expr: &syn::Expr,
        end: proc_macro2::Span,
    ) {
        let lines = end.end().line + 1 - start.start().line;
        let mut inner = expr;
        while let syn::Expr::Reference(r) = inner {
            inner = &r.expr;
        }
        let entries = match inner {
            syn::Expr::Array(a) => a.elems.len(),
            _ => 0,
        };
        if lines > MAX_LINES && entries + 3 < lines {
            self.found.push(Long {
                what: format!("table {name}"),
                first: first_line(attrs, start),
                lines,
            });
        }
    }
}

impl<'ast> Visit<'ast> for Lengths {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_cfg_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_cfg_test(&f.attrs) {
            self.function(&f.attrs, &f.sig, &f.block);
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.function(&f.attrs, &f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.function(&f.attrs, &f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
    fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
        self.table(
            &c.attrs,
            &c.ident,
            c.const_token.span,
            &c.expr,
            c.semi_token.span,
        );
        syn::visit::visit_item_const(self, c);
    }
    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        self.table(
            &s.attrs,
            &s.ident,
            s.static_token.span,
            &s.expr,
            s.semi_token.span,
        );
        syn::visit::visit_item_static(self, s);
    }
}

/// The `// long: reason` comment directly above an item (above its doc
/// comment and attributes), if any.
fn reason_above(text: &str, first: usize) -> Option<&str> {
    let line = text.lines().nth(first.checked_sub(2)?)?;
    line.trim()
        .strip_prefix("// long:")
        .map(str::trim)
        .filter(|r| r.len() >= 10)
}

fn long_items(text: &str) -> Vec<Long> {
    let syntax = syn::parse_file(text).expect("parses");
    let mut lengths = Lengths::default();
    lengths.visit_file(&syntax);
    lengths
        .found
        .into_iter()
        .filter(|long| reason_above(text, long.first).is_none())
        .collect()
}

/// Production code: every crate's `src` (and the CLI), not tests, benches,
/// the fuzz targets or the unit tests inside a file.
fn production_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root().join("crates"))
        .expect("crates")
        .flatten()
    {
        let dir = entry.path();
        let src = dir.join("src");
        rust_files(if src.is_dir() { &src } else { &dir }, &mut files);
    }
    rust_files(&root().join("web/src"), &mut files);
    files.retain(|f| {
        !f.components()
            .any(|c| c.as_os_str() == "tests" || c.as_os_str() == "benches")
    });
    files.sort();
    files
}

#[test]
fn no_function_runs_over_150_lines_without_a_reason() {
    let files = production_files();
    assert!(files.len() > 60, "only {} files read", files.len());
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        for item in long_items(&text) {
            long.push(format!(
                "{}:{}: {} runs {} lines",
                file.strip_prefix(root()).unwrap_or(&file).display(),
                item.first,
                item.what,
                item.lines
            ));
        }
    }
    assert!(
        long.is_empty(),
        "split these, or put `// long: <reason>` on the line above:\n{}",
        long.join("\n")
    );
}

/// The length check itself: a long function is caught, the same function
/// with a reason is not, and a one-entry-per-line table is a list.
#[test]
fn the_length_check_catches_a_long_function() {
    let body = "    let _ = 1;\n".repeat(MAX_LINES);
    let long = format!("/// Doc.\nfn f() {{\n{body}}}\n");
    assert_eq!(long_items(&long).len(), 1);
    assert_eq!(long_items(&long)[0].lines, MAX_LINES + 2);
    let reasoned = format!("// long: one arm per metric family, read in order\n{long}");
    assert!(long_items(&reasoned).is_empty());
    let short = format!(
        "fn f() {{\n{}}}\n",
        "    let _ = 1;\n".repeat(MAX_LINES - 2)
    );
    assert!(long_items(&short).is_empty());
    let list = format!(
        "const T: [u8; {MAX_LINES}] = [\n{}];\n",
        "    1,\n".repeat(MAX_LINES)
    );
    assert!(long_items(&list).is_empty());
    let tests = format!("#[cfg(test)]\nmod tests {{\n{long}}}\n");
    assert!(long_items(&tests).is_empty());
}
