//! The default plural of a kind, as kubebuilder derives it (gobuffalo/flect's rules and
//! dictionary).

/// The default resource name: the lowercased kind in English plural, as kubebuilder
/// makes it (`flect.Pluralize(strings.ToLower(kind))`, gobuffalo/flect v1.0.3), so a
/// kind gets the same resource name here as in a Go operator: `Memcached` ->
/// `memcacheds`, `Policy` -> `policies`, `Person` -> `people`, `Sheep` -> `sheep`.
///
/// The word is looked up in flect's dictionary first (whole words, then words that are
/// already plural), then its suffix rules apply in flect's order: a word that already
/// ends in a rule's plural suffix is kept, one ending in its singular suffix has that
/// suffix replaced. Anything else gains an `s`, unless it already ends in one.
///
/// One flect quirk is not reproduced: for a kind that is a known acronym ending in `S`
/// (`Dns`, `Https`), flect returns a mixed-case name (`dnsDNSes`) that Kubernetes
/// rejects; here such a kind follows the rules above (`dns`, `bsses`).
pub fn plural(kind: &str) -> String {
    let word = kind.to_ascii_lowercase();
    if let Some(noun) = NOUNS.iter().find(|n| n.singular == word) {
        return noun.plural.to_owned();
    }
    let already_plural = NOUNS
        .iter()
        .filter(|n| !n.one_way)
        .any(|n| n.plural == word || n.alternative == Some(word.as_str()));
    if already_plural {
        return word;
    }
    if ABBREVIATIONS.contains(&word.as_str()) {
        return word + "s";
    }
    // Dictionary words apply to compounds too (`SalesPerson`), later entries first,
    // so `human` wins over `man`; words marked exact only match whole.
    let dictionary_rules = NOUNS
        .iter()
        .rev()
        .filter(|n| !n.exact)
        .map(|n| (n.singular, n.plural));
    for (singular, plural) in dictionary_rules.chain(SUFFIX_RULES.iter().copied()) {
        if word.ends_with(plural) {
            return word;
        }
        if let Some(stem) = word.strip_suffix(singular) {
            return format!("{stem}{plural}");
        }
    }
    if word.ends_with('s') {
        word
    } else {
        word + "s"
    }
}

/// An entry of flect's dictionary of irregular nouns.
#[derive(Debug, Clone, Copy)]
struct Noun {
    singular: &'static str,
    plural: &'static str,
    /// Another plural in use, recognised as already plural.
    alternative: Option<&'static str>,
    /// Only the whole word is irregular, not compounds ending in it (`ox`, not `box`).
    exact: bool,
    /// The plural is not recognised as already plural (it belongs to another word).
    one_way: bool,
}

const fn noun(singular: &'static str, plural: &'static str) -> Noun {
    Noun {
        singular,
        plural,
        alternative: None,
        exact: false,
        one_way: false,
    }
}

/// Nouns whose plural is the singular: identical plurals and uncountables.
const fn same(word: &'static str) -> Noun {
    noun(word, word)
}

impl Noun {
    const fn or(self, alternative: &'static str) -> Noun {
        Noun {
            alternative: Some(alternative),
            ..self
        }
    }
    const fn exact(self) -> Noun {
        Noun {
            exact: true,
            ..self
        }
    }
    const fn one_way(self) -> Noun {
        Noun {
            one_way: true,
            ..self
        }
    }
}

/// flect's dictionary, in its order (which sets the priority of the compound rules).
const NOUNS: &[Noun] = &[
    // Identical singular and plural.
    same("aircraft"),
    same("beef").or("beefs"),
    same("bison"),
    same("blues").one_way(),
    same("chassis"),
    same("deer"),
    same("fish").or("fishes"),
    same("moose"),
    same("police"),
    same("salmon").or("salmons"),
    same("series"),
    same("sheep"),
    same("shrimp").or("shrimps"),
    same("species"),
    same("swine").or("swines"),
    same("trout").or("trouts"),
    same("tuna").or("tunas"),
    same("you"),
    // Plurals in -(e)n, apophonic and other irregular plurals.
    noun("child", "children"),
    noun("ox", "oxen").exact(),
    noun("foot", "feet"),
    noun("goose", "geese"),
    noun("man", "men"),
    noun("human", "humans"),
    noun("louse", "lice").exact(),
    noun("mouse", "mice"),
    noun("tooth", "teeth"),
    noun("woman", "women"),
    noun("die", "dice").exact(),
    noun("person", "people"),
    // French -u, Greek -on, Latin -um, -us, -a, -ex, -ix and -is.
    noun("adieu", "adieux").or("adieus"),
    noun("fabliau", "fabliaux"),
    noun("bureau", "bureaus").or("bureaux"),
    noun("criterion", "criteria"),
    noun("ganglion", "ganglia").or("ganglions"),
    noun("lexicon", "lexica").or("lexicons"),
    noun("mitochondrion", "mitochondria").or("mitochondrions"),
    noun("noumenon", "noumena"),
    noun("phenomenon", "phenomena"),
    noun("taxon", "taxa"),
    same("media"),
    noun("medium", "media").or("mediums").one_way(),
    noun("stadium", "stadiums").or("stadia"),
    noun("aquarium", "aquaria").or("aquariums"),
    noun("auditorium", "auditoria").or("auditoriums"),
    noun("symposium", "symposia").or("symposiums"),
    noun("curriculum", "curriculums").or("curricula"),
    noun("quota", "quotas"),
    noun("alumnus", "alumni").or("alumnuses"),
    noun("bacillus", "bacilli"),
    noun("cactus", "cacti").or("cactuses"),
    noun("coccus", "cocci"),
    noun("focus", "foci").or("focuses"),
    noun("locus", "loci").or("locuses"),
    noun("nucleus", "nuclei").or("nucleuses"),
    // Sic: flect's spelling, and so kubebuilder's resource name.
    noun("octopus", "octupuses").or("octopi"),
    noun("radius", "radii").or("radiuses"),
    noun("syllabus", "syllabi"),
    noun("corpus", "corpora").or("corpuses"),
    noun("genus", "genera"),
    noun("alumna", "alumnae"),
    noun("vertebra", "vertebrae"),
    noun("differentia", "differentiae"),
    noun("minutia", "minutiae"),
    noun("vita", "vitae"),
    noun("larva", "larvae"),
    noun("postcava", "postcavae"),
    noun("praecava", "praecavae"),
    noun("uva", "uvae"),
    noun("apex", "apices").or("apexes"),
    noun("codex", "codices").or("codexes"),
    noun("index", "indices").or("indexes"),
    noun("latex", "latices").or("latexes"),
    noun("vertex", "vertices").or("vertexes"),
    noun("vortex", "vortices").or("vortexes"),
    noun("appendix", "appendices").or("appendixes"),
    noun("radix", "radices").or("radixes"),
    noun("helix", "helices").or("helixes"),
    noun("axis", "axes").exact(),
    noun("crisis", "crises"),
    noun("ellipsis", "ellipses").one_way(),
    noun("genesis", "geneses"),
    noun("oasis", "oases"),
    noun("thesis", "theses"),
    noun("testis", "testes"),
    noun("base", "bases"),
    noun("basis", "bases").one_way(),
    noun("alias", "aliases").exact(),
    noun("vedalia", "vedalias"),
    // Words in -se, -ch, -z and -o that the suffix rules would get wrong.
    noun("use", "uses").exact(),
    noun("abuse", "abuses"),
    noun("cause", "causes"),
    noun("clause", "clauses"),
    noun("cruse", "cruses"),
    noun("excuse", "excuses"),
    noun("fuse", "fuses"),
    noun("house", "houses"),
    noun("misuse", "misuses"),
    noun("muse", "muses"),
    noun("pause", "pauses"),
    noun("ache", "aches"),
    noun("topaz", "topazes"),
    noun("buffalo", "buffaloes").or("buffalos"),
    noun("potato", "potatoes"),
    noun("tomato", "tomatoes"),
    // Uncountables.
    same("equipment"),
    same("information"),
    same("jeans"),
    same("money"),
    same("news"),
    same("rice"),
    // Exceptions to the -f(e) -> -ves, -y -> -ies, -um -> -a and -o -> -oes rules.
    noun("dwarf", "dwarfs").or("dwarves"),
    noun("hoof", "hoofs").or("hooves"),
    noun("thief", "thieves"),
    noun("chive", "chives"),
    noun("hive", "hives"),
    noun("move", "moves"),
    noun("movie", "movies"),
    noun("cookie", "cookies"),
    noun("pretorium", "pretoriums"),
    noun("agenda", "agendas"),
    noun("formula", "formulas").or("formulae"),
    noun("shoe", "shoes"),
    noun("toe", "toes").exact(),
    same("graffiti"),
    // flect's `ID` -> `IDs` only matches the uppercase word: never a lowercased kind.
];

/// flect's acronyms that the suffix rules below would inflect: flect only adds an `s`.
const ABBREVIATIONS: &[&str] = &["eia", "ssh", "tia"];

/// flect's suffix rules, (singular suffix, plural suffix) in priority order.
/// (Its `S` -> `Ses` rule for uppercase abbreviations never sees a lowercased kind.)
const SUFFIX_RULES: &[(&str, &str)] = &[
    // -f and -fe -> -ves
    ("tive", "tives"),
    ("eaf", "eaves"),
    ("oaf", "oaves"),
    ("afe", "aves"),
    ("arf", "arves"),
    ("rfe", "rves"),
    ("rf", "rves"),
    ("lf", "lves"),
    ("fe", "ves"),
    // -y after a consonant -> -ies
    ("ay", "ays"),
    ("ey", "eys"),
    ("oy", "oys"),
    ("quy", "quies"),
    ("uy", "uys"),
    ("y", "ies"),
    // French -eau, Latin -a, Greek -on and Latin -um
    ("eau", "eaux"),
    ("bula", "bulae"),
    ("dula", "bulae"),
    ("lula", "bulae"),
    ("nula", "bulae"),
    ("vula", "bulae"),
    ("hedron", "hedra"),
    ("ium", "ia"),
    ("seum", "seums"),
    ("eum", "ea"),
    ("oum", "oa"),
    ("stracum", "straca"),
    ("dum", "da"),
    ("elum", "ela"),
    ("ilum", "ila"),
    ("olum", "ola"),
    ("ulum", "ula"),
    ("llum", "lla"),
    ("ylum", "yla"),
    ("imum", "ima"),
    ("ernum", "erna"),
    ("gnum", "gna"),
    ("brum", "bra"),
    ("crum", "cra"),
    ("terum", "tera"),
    ("serum", "sera"),
    ("trum", "tra"),
    ("antum", "anta"),
    ("atum", "ata"),
    ("entum", "enta"),
    ("etum", "eta"),
    ("itum", "ita"),
    ("otum", "ota"),
    ("utum", "uta"),
    ("ctum", "cta"),
    ("ovum", "ova"),
    // Latin -trix and -is
    ("trix", "trices"),
    ("iasis", "iases"),
    ("mesis", "meses"),
    ("kinesis", "kineses"),
    ("resis", "reses"),
    ("gnosis", "gnoses"),
    ("opsis", "opses"),
    ("ysis", "yses"),
    // -s, -ch, -sh, -z, -o and -x
    ("ouse", "ouses"),
    ("lause", "lauses"),
    ("us", "uses"),
    ("ch", "ches"),
    ("io", "ios"),
    ("sh", "shes"),
    ("ss", "sses"),
    ("ez", "ezzes"),
    ("iz", "izzes"),
    ("tz", "tzes"),
    ("zz", "zzes"),
    ("ano", "anos"),
    ("lo", "los"),
    ("to", "tos"),
    ("oo", "oos"),
    ("o", "oes"),
    ("x", "xes"),
];
