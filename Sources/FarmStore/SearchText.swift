import FarmCore

/// How page text is written into the search index, and turned back for people.
///
/// FTS5's `unicode61` tokenizer splits at spaces and punctuation only, so a run of Chinese or Japanese characters
/// (written without spaces) is one token and a word inside a sentence could never match. The index therefore holds
/// every Han and kana character as a token of its own: a zero-width space (U+200B, a separator for `unicode61`) is
/// put between such a character and its neighbours, and a query's runs become phrases of single characters, so any
/// substring of Chinese text matches. A zero-width space rather than a plain one because the text's own spaces must
/// survive: removing every added separator gives back exactly the stored text, spaces between a Chinese and an English
/// word included.
public enum SearchText {
    /// The separator put around Han and kana characters in the index.
    public static let separator: Unicode.Scalar = "\u{200B}"

    /// Han ideographs and kana: characters that are each a token of their own in the index.
    public static func isSingleCharacterToken(_ scalar: Unicode.Scalar) -> Bool {
        Scripts.isHan(scalar) || (0x3040...0x30FF).contains(scalar.value) || (0x31F0...0x31FF).contains(scalar.value)
    }

    /// `text` as the index holds it: a separator between each Han or kana character and the character next to it
    /// (unless that is whitespace already, or a mark that belongs to the character).
    public static func indexed(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            if let previous, previous != separator, scalar != separator,
               !previous.properties.isWhitespace, !scalar.properties.isWhitespace, !isMark(scalar),
               isSingleCharacterToken(previous) || isSingleCharacterToken(scalar) {
                result.append(separator)
            }
            result.append(scalar)
            previous = scalar
        }
        return String(result)
    }

    /// Combining marks and variation selectors stay with the character before them.
    static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    /// A document name as the name index holds it: spaced like page text (`indexed`), Greek accents folded
    /// (`folded`). A query's words are folded the same way for names (`SearchQuery.nameMatch`).
    public static func nameIndexed(_ name: String) -> String { indexed(folded(name)) }

    /// `text` with each accented Greek letter replaced by its base letter (ά → α, Ἀθῆναι → Αθηναι), as SQLite's
    /// `remove_diacritics 2` does for Latin letters and decomposed marks; everything else as it is.
    public static func folded(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { greekBase[$0] != nil }) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { result.append(greekBase[scalar] ?? scalar) }
        return String(result)
    }

    static let greekBase: [Unicode.Scalar: Unicode.Scalar] =
        Dictionary(uniqueKeysWithValues: zip(greekAccented.unicodeScalars, greekBases.unicodeScalars))

    /// Greek letters with accents, breathings, diaeresis or iota subscript (Unicode 0370–03FF, 1F00–1FFF) and
    /// their base letters, one for one: the canonical decompositions whose marks are all combining (made with
    /// Python's unicodedata, NFD). SQLite's `remove_diacritics` folds Latin letters only.
    static let greekAccented = "ΆΈΉΊΌΎΏΐΪΫάέήίΰϊϋόύώϓϔἀἁἂἃἄἅἆἇἈἉἊἋἌἍἎἏἐἑἒἓἔἕἘἙἚἛἜἝἠἡἢἣἤἥἦἧἨἩ" +
        "ἪἫἬἭἮἯἰἱἲἳἴἵἶἷἸἹἺἻἼἽἾἿὀὁὂὃὄὅὈὉὊὋὌὍὐὑὒὓὔὕὖὗὙὛὝὟὠὡὢὣὤὥὦὧὨὩὪὫὬὭ" +
        "ὮὯὰάὲέὴήὶίὸόὺύὼώᾀᾁᾂᾃᾄᾅᾆᾇᾈᾉᾊᾋᾌᾍᾎᾏᾐᾑᾒᾓᾔᾕᾖᾗᾘᾙᾚᾛᾜᾝᾞᾟᾠᾡᾢᾣᾤᾥᾦᾧᾨᾩᾪᾫ" +
        "ᾬᾭᾮᾯᾰᾱᾲᾳᾴᾶᾷᾸᾹᾺΆᾼῂῃῄῆῇῈΈῊΉῌῐῑῒΐῖῗῘῙῚΊῠῡῢΰῤῥῦῧῨῩῪΎῬῲῳῴῶῷῸΌῺΏῼ"
    static let greekBases = "ΑΕΗΙΟΥΩιΙΥαεηιυιυουωϒϒααααααααΑΑΑΑΑΑΑΑεεεεεεΕΕΕΕΕΕηηηηηηηηΗΗ" +
        "ΗΗΗΗΗΗιιιιιιιιΙΙΙΙΙΙΙΙοοοοοοΟΟΟΟΟΟυυυυυυυυΥΥΥΥωωωωωωωωΩΩΩΩΩΩ" +
        "ΩΩααεεηηιιοουυωωααααααααΑΑΑΑΑΑΑΑηηηηηηηηΗΗΗΗΗΗΗΗωωωωωωωωΩΩΩΩ" +
        "ΩΩΩΩαααααααΑΑΑΑΑηηηηηΕΕΗΗΗιιιιιιΙΙΙΙυυυυρρυυΥΥΥΥΡωωωωωΟΟΩΩΩ"

    /// Index text (a snippet) as people read it: the added separators removed.
    public static func displayed(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where scalar != separator { result.append(scalar) }
        return String(result)
    }
}
