import FarmCore

/// A page in a script no installed language reads (issue 36): Tesseract's OSD named the script (in `--lang auto`'s
/// choice or the orient stage), and none of the languages written in it is installed here, so the page was read
/// with a language of another script and its text is garbage. The finding names the Debian package that would
/// read it; `ocr`, `run`'s summary and `review` show it.
public enum MissingLanguage {
    /// OSD's script confidence needed: the orient stage takes a script as known from 1.0, but a warning that sends
    /// someone to install a package asks for more.
    static let scriptConfidenceNeeded = 2.0
    /// The finding's name among the page's stage findings, and its key in the stored structure.
    public static let findingName = PageResult.missingLanguageKey

    /// A reading half of whose checkable words (three letters or more, no digit; at least `checkableWords` of them)
    /// are in its language's dictionary is text in that language, whatever script OSD named: a receipt read with eng
    /// at 54% dictionary words was called Cyrillic at script confidence 3.8 (SROIE 585), where a Cyrillic page read
    /// with eng finds next to no English words.
    static let dictionaryShare = 0.5
    static let checkableWords = 10

    /// Whether `result` reads as text in the language it was read with (Tesseract's dictionary flags; the neural
    /// engine has none, so its readings never do).
    public static func readsAsItsLanguage(_ result: PageResult) -> Bool {
        var checkable = 0, inDictionary = 0
        for word in result.words where word.text.count >= 3 && word.text.allSatisfy(\.isLetter) {
            checkable += 1
            if word.fromDictionary { inDictionary += 1 }
        }
        return checkable >= checkableWords && Double(inDictionary) >= dictionaryShare * Double(checkable)
    }

    /// Whether the page's reading is text in the language it was read with, from Tesseract's dictionary flags: its
    /// own words when Tesseract read it; for a page `auto` gave the neural engine after Tesseract's first reading,
    /// that reading's verdict (the `engine` finding's `firstReadingKey`); nil when Tesseract did not read the page
    /// (the neural engine has no dictionary, and no Cyrillic, Arabic or Hangul to show a script by: an English
    /// receipt OSD calls Cyrillic, read by it, would be warned about wrongly).
    public static func readsAsLanguage(_ result: PageResult, findings: [(String, JSON)]) -> Bool? {
        if TesseractRecognizer.flagsDictionaryWords(of: result) { return readsAsItsLanguage(result) }
        return findings.first { $0.0 == "engine" }?.1[firstReadingKey]?.boolValue
    }

    /// The `engine` finding's key for whether Tesseract's first reading of a page `auto` gave the neural engine read
    /// as text in its language (`readsAsItsLanguage`).
    static let firstReadingKey = "first_reading_in_language"

    /// The Debian package of a Tesseract language: tesseract-ocr-CODE, `_` written `-` (chi_sim: tesseract-ocr-chi-sim).
    public static func package(of language: String) -> String {
        "tesseract-ocr-" + String(language.lowercased().map { $0 == "_" ? "-" : $0 })
    }

    /// The finding for a page whose stage findings are `findings` (`language`, then `orient`, give OSD's script),
    /// read with `languages`, on a host with `installed`; nil when the script is unknown, unsure, not one the
    /// language table knows, or has an installed language.
    public static func finding(in findings: [(String, JSON)], languages: [String], installed: [String]) -> JSON? {
        let seen = findings.lazy.filter { $0.0 == "language" || $0.0 == "orient" }.compactMap { _, stage -> (String, Double)? in
            guard let script = stage["script"]?.stringValue, !script.isEmpty,
                  let confidence = stage["script_confidence"]?.doubleValue else { return nil }
            return (script, confidence)
        }.first
        guard let (script, confidence) = seen, confidence >= scriptConfidenceNeeded,
              let written = AutomaticLanguage.languagesByScript[script], let first = written.first,
              !written.contains(where: installed.contains) else { return nil }
        let read = languages.joined(separator: "+")
        return .object([
            ("script", JSON(script)), ("script_confidence", .rounded(confidence, places: 2)),
            ("languages", .array(written.map { JSON($0) })), ("package", JSON(package(of: first))),
            ("read_with", JSON(read)),
            ("message", JSON("the page is in \(script) script and no language for it is installed; it was read with \(read) "
                             + "(Debian: apt-get install \(package(of: first)), then --lang \(first))")),
        ])
    }
}
