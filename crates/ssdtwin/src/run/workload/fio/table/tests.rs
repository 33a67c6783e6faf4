use super::*;

#[test]
fn no_name_or_alias_twice() {
    let mut seen = std::collections::BTreeMap::new();
    for d in all() {
        for n in std::iter::once(&d.name).chain(d.aliases) {
            if let Some(first) = seen.insert(*n, d.name) {
                panic!("`{n}` is both {first}'s and {}'s", d.name);
            }
        }
    }
    assert!(seen.len() > 400, "{} spellings", seen.len());
}

#[test]
fn lookup_finds_names_and_aliases() {
    assert_eq!(lookup("readwrite").map(|d| d.name), Some("rw"));
    assert_eq!(lookup("timeout").map(|d| d.name), Some("runtime"));
    assert_eq!(lookup("ss").map(|d| d.name), Some("steadystate"));
    assert_eq!(canonical("iomem"), "mem");
    assert_eq!(canonical("frobnicate"), "frobnicate");
    assert!(matches!(lookup("userspace_reap").map(|d| d.class), Some(Class::Host)));
    assert_eq!(lookup("dp_scheme").map(|d| d.class), Some(Class::Fio(Reader::Placement)));
    assert_eq!(lookup("fdp_pli").map(|d| d.name), Some("plids"));
}

#[test]
fn every_trace_option_is_a_trace_entry() {
    for o in crate::run::trace::options::OPTIONS {
        let d = lookup(o).unwrap_or_else(|| panic!("`{o}` is not in the table"));
        assert_eq!(d.class, Class::Twin(Reader::Trace), "{o}");
    }
    let trace_entries = all().filter(|d| d.class == Class::Twin(Reader::Trace)).count();
    assert_eq!(trace_entries, crate::run::trace::options::OPTIONS.len());
}

#[test]
fn a_default_value_is_inert() {
    let d = |k| lookup(k).unwrap();
    assert!(d("dataplacement").is_inert("none"));
    assert!(!d("dataplacement").is_inert("fdp"));
    assert!(d("write_barrier").is_inert("0"));
    assert!(!d("write_barrier").is_inert("1"));
    assert!(d("thinkcycles").is_inert("0"));
    assert!(!d("thinkcycles").is_inert("2"));
    assert!(!d("read_iolog").is_inert(""));
    assert!(d("steadystate_check_interval").is_inert("1s") && d("ss_interval").is_inert("1"));
    assert!(!d("steadystate_check_interval").is_inert("500ms"));
}

#[test]
fn refused_options_say_why_and_modelled_ones_have_help() {
    for d in all() {
        assert!(!d.name.is_empty() && !d.name.contains(char::is_whitespace), "{d:?}");
        if let Class::Refused(why) = d.class {
            assert!(why.len() > 10, "{}: {why}", d.name);
        }
        if matches!(d.class, Class::Fio(_) | Class::Twin(_)) {
            assert!(!d.help.is_empty(), "{} has no help", d.name);
        }
    }
}
