//! reference/cli.md and reference/manager.md, from clap's own definitions: `rkb`'s command
//! tree and the manager's `Args`. A flag added, renamed or re-documented changes the page.

use clap::{Arg, ArgAction, Command, CommandFactory};

use super::markdown::{cell, code, table, text};

#[test]
fn cli_reference_page() {
    let mut root = rkb::cli::Cli::command();
    root.build();
    let mut commands = Vec::new();
    collect(&root, &mut commands);

    let mut page =
        crate::generated_from("`rkb`'s clap definitions (cli/src/cli.rs)", "cli_pages.rs");
    page.push_str(
        "# CLI\n\nEvery command of `rkb`, as `rkb <command> --help` prints it: what it does, its \
         flags with their defaults and accepted values, and the examples its help ends with. \
         The flags are named as kubebuilder's, so its habits carry over.\n\n",
    );
    let rows: Vec<Vec<String>> = commands
        .iter()
        .filter(|c| c.get_subcommands().next().is_none())
        .map(|c| vec![link(c), cell(&about(c))])
        .collect();
    page.push_str(&table(&["Command", "What it does"], &rows));
    for command in &commands {
        page.push_str(&section(command));
    }
    crate::generated_page("reference/cli.md", &page);
}

#[test]
fn manager_reference_page() {
    let manager = rkb_manager::manager::Args::command();
    let mut page = crate::generated_from(
        "the clap definitions of `rkb_manager::manager::Args` (manager/src/manager/args.rs) and the \
         variables manager/src reads",
        "cli_pages.rs",
    );
    page.push_str(
        "# Manager flags and environment\n\nA generated project's `src/lib.rs` flattens \
         `rkb_runtime::manager::Args` into its own clap parser (`Args`), so the manager binary takes \
         these flags (`<project> --help` lists them, with any you add). They are named like \
         controller-runtime's, so manifests and runbooks written for a kubebuilder operator \
         carry over; boolean flags also take Go's `--flag=true|false`.\n",
    );
    page.push_str(&arguments(&manager, "##"));

    // Variables read through clap, and the ones the code reads itself.
    let mut rows: Vec<Vec<String>> = manager
        .get_arguments()
        .filter_map(|a| Some((a.get_env()?, a)))
        .map(|(env, arg)| {
            let flag = format!("--{}", arg.get_long().unwrap());
            vec![
                code(&env.to_string_lossy()),
                format!("The default of {}.", code(&flag)),
            ]
        })
        .collect();
    let read = crate::env_vars_read(&crate::repo().join("manager/src"));
    let stale: Vec<&str> = MANAGER_VARIABLES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !read.contains(*name))
        .collect();
    assert!(
        stale.is_empty(),
        "MANAGER_VARIABLES names variables manager/src no longer reads: {stale:?}"
    );
    let undocumented: Vec<&String> = read
        .iter()
        .filter(|name| !MANAGER_VARIABLES.iter().any(|(n, _)| n == name))
        .collect();
    assert!(
        undocumented.is_empty(),
        "manager/src reads {undocumented:?}: add a row to MANAGER_VARIABLES in cli/tests/book/cli_pages.rs"
    );
    rows.extend(
        MANAGER_VARIABLES
            .iter()
            .map(|(name, meaning)| vec![code(name), cell(meaning)]),
    );
    page.push_str("\n## Environment variables\n\n");
    page.push_str(&table(&["Variable", "Effect"], &rows));
    page.push_str(
        "\nThe Kubernetes client itself is configured as kube-rs configures it: in a pod from \
         its service account, else from `KUBECONFIG` (or `~/.kube/config`).\n",
    );
    crate::generated_page("reference/manager.md", &page);
}

/// The variables manager/src reads with `std::env::var` outside clap, and what they do.
const MANAGER_VARIABLES: &[(&str, &str)] = &[
    (
        "HOSTNAME",
        "The first half of the manager's leader-election identity (`<HOSTNAME>_<uuid>`, as \
         client-go's): in a pod, the pod's name.",
    ),
    (
        "KUBERNETES_SERVICE_HOST",
        "With `KUBERNETES_SERVICE_PORT`, the API server's `host:port` in the `host` label of \
         the REST client metrics (else the kubeconfig's server).",
    ),
    ("KUBERNETES_SERVICE_PORT", "See `KUBERNETES_SERVICE_HOST`."),
    (
        "NO_COLOR",
        "When set and not empty, text logs are not coloured even on a terminal (they never are \
         when piped).",
    ),
];

/// `command` and its subcommands, depth first, without clap's `help`.
fn collect(command: &Command, out: &mut Vec<Command>) {
    out.push(command.clone());
    for sub in command.get_subcommands().filter(|c| c.get_name() != "help") {
        collect(sub, out);
    }
}

/// `rkb create api`, as the user types it.
fn full_name(command: &Command) -> String {
    command
        .get_bin_name()
        .unwrap_or(command.get_name())
        .to_owned()
}

fn link(command: &Command) -> String {
    let name = full_name(command);
    format!("[{}](#{})", code(&name), name.replace(' ', "-"))
}

/// What the command does, as one sentence or paragraph ending in a full stop (clap drops it).
fn about(command: &Command) -> String {
    let about = command
        .get_long_about()
        .or(command.get_about())
        .map(|s| s.to_string())
        .unwrap_or_default();
    sentence(&about)
}

fn sentence(text: &str) -> String {
    let text = text.trim_end();
    if text.is_empty() || text.ends_with('.') {
        text.to_owned()
    } else {
        format!("{text}.")
    }
}

/// One command's section: what it does, its subcommands, its usage, its arguments and the
/// help after them. The root's subcommands are the table at the top of the page.
pub fn section(command: &Command) -> String {
    let name = full_name(command);
    let mut out = format!("\n## {}\n\n{}\n", code(&name), text(&about(command)));
    let subcommands: Vec<&Command> = command
        .get_subcommands()
        .filter(|c| c.get_name() != "help")
        .collect();
    if name.contains(' ') && !subcommands.is_empty() {
        out.push('\n');
        for sub in subcommands {
            out.push_str(&format!("- {}: {}\n", link(sub), text(&about(sub))));
        }
    }
    let usage = command.clone().render_usage().to_string();
    out.push_str(&format!("\n```text\n{}\n```\n", usage.trim_end()));
    out.push_str(&arguments(command, "###"));
    if let Some(after) = command.get_after_help() {
        out.push_str(&after_help(&after.to_string()));
    }
    out
}

/// The help after the flags: paragraphs, then `Examples:` as a shell block (shown, not run).
fn after_help(help: &str) -> String {
    let at = help
        .find("\nExample")
        .map(|at| at + 1)
        .unwrap_or(if help.starts_with("Example") {
            0
        } else {
            help.len()
        });
    let (prose, examples) = help.split_at(at);
    let mut out = String::new();
    for paragraph in prose.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let words: Vec<&str> = paragraph.split_whitespace().collect();
        out.push_str(&format!("\n{}\n", text(&words.join(" "))));
    }
    if let Some((_, body)) = examples.split_once('\n') {
        let lines: Vec<&str> = body
            .lines()
            .map(|l| l.strip_prefix("  ").unwrap_or(l))
            .collect();
        out.push_str(&format!(
            "\nExamples:\n\n```sh\n{}\n```\n",
            lines.join("\n")
        ));
    }
    out
}

/// The arguments of `command` as tables, one per help heading, under `level` headings:
/// each flag with its value, default, environment variable, accepted values and help.
/// clap's own `--help` and `--version` are left out.
fn arguments(command: &Command, level: &str) -> String {
    let shown: Vec<&Arg> = command
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter(|a| {
            !matches!(
                a.get_action(),
                ArgAction::Help | ArgAction::HelpShort | ArgAction::HelpLong | ArgAction::Version
            )
        })
        .collect();
    let mut ordered: Vec<Option<&str>> = Vec::new();
    for arg in &shown {
        if !ordered.contains(&heading(arg)) {
            ordered.push(heading(arg));
        }
    }
    let mut out = String::new();
    for group in ordered {
        let args: Vec<&&Arg> = shown.iter().filter(|a| heading(a) == group).collect();
        let defaults = args.iter().any(|a| !default(a).is_empty());
        let rows: Vec<Vec<String>> = args
            .iter()
            .map(|a| {
                let mut row = vec![flag(a), cell(&description(a))];
                if defaults {
                    row.insert(1, default(a));
                }
                row
            })
            .collect();
        let first = if group == Some("Arguments") {
            "Argument"
        } else {
            "Flag"
        };
        let header: &[&str] = if defaults {
            &[first, "Default", "Description"]
        } else {
            &[first, "Description"]
        };
        out.push_str(&format!("\n{level} {}\n\n", group.unwrap_or("Options")));
        out.push_str(&table(header, &rows));
    }
    out
}

fn heading(arg: &Arg) -> Option<&str> {
    if arg.is_positional() {
        Some("Arguments")
    } else {
        arg.get_help_heading()
    }
}

/// `--kind <KIND>`, `--leader-elect[=<BOOL>]`, `<SHELL>`.
fn flag(arg: &Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    let takes_value = arg.get_action().takes_values();
    let optional = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
    let shown = match arg.get_long() {
        None => value,
        Some(long) if !takes_value => format!("--{long}"),
        Some(long) if optional => format!("--{long}[={value}]"),
        Some(long) => format!("--{long} {value}"),
    };
    match arg.get_short() {
        Some(short) => cell(&code(&format!("-{short}, {shown}"))),
        None => cell(&code(&shown)),
    }
}

fn default(arg: &Arg) -> String {
    let values: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if arg.is_hide_default_value_set() || values.is_empty() || !arg.get_action().takes_values() {
        return String::new();
    }
    cell(&code(&values.join(",")))
}

/// The help, then the accepted values (with their own help) and the environment variable.
fn description(arg: &Arg) -> String {
    let mut out = sentence(
        &arg.get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default(),
    );
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set() && arg.get_action().takes_values())
        .map(|v| match v.get_help() {
            Some(help) => format!(
                "{}: {}",
                code(v.get_name()),
                help.to_string().trim_end_matches('.')
            ),
            None => code(v.get_name()),
        })
        .collect();
    // `true`/`false` say nothing a BOOL does not.
    if !values.is_empty()
        && arg
            .get_value_names()
            .is_none_or(|n| n[0].as_str() != "BOOL")
    {
        out.push_str(&format!(" One of: {}.", values.join("; ")));
    }
    if let Some(env) = arg.get_env() {
        out.push_str(&format!(
            " Read from `${}` when not given.",
            env.to_string_lossy()
        ));
    }
    out
}
