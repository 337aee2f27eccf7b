import FarmCore
import ICU

/// The language of a page: which of the languages it was read in its text is mostly written in.
///
/// The page's words (ICU segments of letters, kana or ideographs) are counted by script, and the script with the
/// most words wins; the answer is the first of the page's languages written in that script (Han: chi_sim, chi_tra,
/// jpn; Latin: eng, deu, fra…). Words are counted rather than letters because a Latin word spends about three times
/// as many letters as a Chinese word spends characters: by letters, a Chinese page with English lines between its
/// paragraphs (Samples/pages/cjk-000.png: 458 Han, 632 Latin letters) would come out English.
public enum PageLanguage {
    /// The page's language among `languages`, or nil when the text has no words in a script of any of them.
    public static func detect(text: String, languages: [String]) -> String? {
        guard let breaker = try? WordBreaker() else { return nil }
        return detect(tokens: breaker.tokens(in: text), languages: languages)
    }

    /// The page's language from tokens already made.
    public static func detect(tokens: [WordToken], languages: [String]) -> String? {
        var counts: [WritingSystem: Int] = [:]
        var kanaWords = 0
        for token in tokens where token.kind.isWord {
            guard let script = token.text.unicodeScalars.lazy.compactMap(WritingSystem.init).first else { continue }
            // ICU reports kana words found by its dictionary as ideographic: look at the characters.
            if token.text.unicodeScalars.contains(where: WritingSystem.isKana) { kanaWords += 1 }
            counts[script, default: 0] += 1
        }
        // Most words first; ties go to the script of the earlier language.
        let ranked = counts.sorted { a, b in
            a.value != b.value ? a.value > b.value : firstIndex(of: a.key, in: languages) < firstIndex(of: b.key, in: languages)
        }
        for (script, words) in ranked {
            let candidates = languages.filter { WritingSystem.of(language: $0) == script }
            guard let first = candidates.first else { continue }
            // Kana in a tenth of the Han-script words: Japanese, when the page may be Japanese.
            if script == .han, kanaWords * 10 >= words, let japanese = candidates.first(where: { $0.hasPrefix("jpn") }) {
                return japanese
            }
            return first
        }
        return nil
    }

    private static func firstIndex(of script: WritingSystem, in languages: [String]) -> Int {
        languages.firstIndex { WritingSystem.of(language: $0) == script } ?? languages.count
    }
}

/// The script a letter belongs to, as far as telling Tesseract's languages apart needs. Han and kana count together
/// (Japanese writes both).
enum WritingSystem: Hashable {
    case han, hangul, latin, cyrillic, greek, arabic, hebrew, devanagari, thai

    /// The script of a letter; nil for anything else (digits, marks, punctuation, scripts not listed).
    init?(_ scalar: Unicode.Scalar) {
        let v = scalar.value
        if Scripts.isHan(scalar) || Self.isKana(scalar) {
            self = .han
            return
        }
        guard scalar.properties.isAlphabetic else { return nil }
        switch v {
        case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF, 0xFF21...0xFF3A, 0xFF41...0xFF5A: self = .latin
        case 0x370...0x3FF, 0x1F00...0x1FFF: self = .greek
        case 0x400...0x52F: self = .cyrillic
        case 0x590...0x5FF: self = .hebrew
        case 0x600...0x6FF, 0x750...0x77F, 0xFB50...0xFDFF, 0xFE70...0xFEFF: self = .arabic
        case 0x900...0x97F: self = .devanagari
        case 0xE00...0xE7F: self = .thai
        case 0x1100...0x11FF, 0x3130...0x318F, 0xAC00...0xD7AF: self = .hangul
        default: return nil
        }
    }

    static func isKana(_ scalar: Unicode.Scalar) -> Bool {
        (0x3040...0x30FF).contains(scalar.value) || (0x31F0...0x31FF).contains(scalar.value)
            || (0xFF66...0xFF9D).contains(scalar.value)
    }

    /// The script a Tesseract language is written in; Latin for every code not listed.
    static func of(language code: String) -> WritingSystem {
        if Scripts.isUnspacedLanguage(code) { return .han }
        let base = code.hasSuffix("_vert") ? String(code.dropLast(5)) : code
        return nonLatin[base] ?? .latin
    }

    private static let nonLatin: [String: WritingSystem] = [
        "kor": .hangul,
        "rus": .cyrillic, "ukr": .cyrillic, "bel": .cyrillic, "bul": .cyrillic, "srp": .cyrillic, "mkd": .cyrillic,
        "kaz": .cyrillic, "kir": .cyrillic, "mon": .cyrillic, "tgk": .cyrillic, "tat": .cyrillic,
        "ell": .greek, "grc": .greek,
        "heb": .hebrew, "yid": .hebrew,
        "ara": .arabic, "fas": .arabic, "urd": .arabic, "pus": .arabic, "uig": .arabic, "snd": .arabic,
        "hin": .devanagari, "mar": .devanagari, "nep": .devanagari, "san": .devanagari,
        "tha": .thai,
    ]
}
