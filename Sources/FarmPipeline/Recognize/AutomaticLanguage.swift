import FarmCore
import Leptonica
import Tesseract

/// `--lang auto`: a page's languages chosen from the script Tesseract's OSD model sees on it, among the languages
/// installed here. A script's first installed language reads the page; English follows a non-Latin one, since such
/// documents carry Latin words (names, codes, URLs) too. The choice is recorded with the page's findings.
public enum AutomaticLanguage {
    /// Tesseract languages for each OSD script name, in order of preference.
    static let languagesByScript: [String: [String]] = [
        "Latin": ["eng", "deu", "fra", "spa", "ita", "por", "nld", "pol", "ces", "swe"],
        "Han": ["chi_sim", "chi_tra", "jpn"],
        "Japanese": ["jpn"], "Katakana": ["jpn"], "Hiragana": ["jpn"],
        "Hangul": ["kor"], "Korean": ["kor"],
        "Cyrillic": ["rus", "ukr", "bul", "srp", "bel", "mkd"],
        "Greek": ["ell"], "Arabic": ["ara", "fas", "urd"], "Hebrew": ["heb"],
        "Devanagari": ["hin", "mar", "nep", "san"], "Bengali": ["ben"], "Tamil": ["tam"], "Thai": ["tha"],
        "Armenian": ["hye"], "Georgian": ["kat"], "Ethiopic": ["amh"],
    ]

    /// Probes to run when OSD sees Latin: each installed non-Latin script's first language, with English. OSD
    /// names the script of most letters, so it calls a Chinese page with many English words Latin (15 of the 20
    /// synthetic cjk pages); a reading of part of the page tells them apart.
    public static func probes(installed: [String]) -> [[String]] {
        let scripts = Set(languagesByScript.keys).subtracting(["Latin"]).sorted()
        var seen: Set<String> = []
        return scripts.compactMap { script in
            guard let first = languagesByScript[script]!.first(where: installed.contains), seen.insert(first).inserted
            else { return nil }
            return installed.contains("eng") ? [first, "eng"] : [first]
        }
    }

    /// The band of the page a probe reads: a quarter of its height across the middle, where body text is.
    static func probeBand(width: Int, height: Int) -> Leptonica.Box {
        Leptonica.Box(x: 0, y: height * 3 / 8, width: width, height: max(1, height / 4))
    }

    /// Characters outside the Latin script, on confidently read lines, that make a probe choose its language. A
    /// mixed page read as Latin loses all its other text, while a Latin page read with a Chinese plan loses little
    /// (its Latin runs are read again in English), so a little evidence is enough: one short confident line.
    static let probeEvidence = 8
    /// Line confidence (0–100) below which a probe's line is taken for noise (pictures and rules read as text).
    static let probeLineConfidence = 60.0

    /// Letters beyond the Latin blocks on the lines of `result` that were read with confidence, mostly in them.
    static func confidentCharacters(outsideLatin result: PageResult) -> Int {
        result.lines.reduce(0) { total, line in
            let letters = line.words.flatMap { $0.text.filter(\.isLetter) }
            let foreign = letters.filter { $0.unicodeScalars.first.map { $0.value >= 0x370 } ?? false }.count
            let counts = line.confidence >= probeLineConfidence && foreign * 2 >= letters.count
            return total + (counts ? foreign : 0)
        }
    }

    /// Whether a language is written in Latin script (as far as this table knows).
    static func isLatin(_ language: String) -> Bool { languagesByScript["Latin"]!.contains(language) }

    /// The languages for a page written in `script` (nil: not detected).
    public static func choose(script: String?, installed: [String]) -> [String] {
        let fallback = installed.contains("eng") ? ["eng"] : Array(installed.prefix(1))
        guard let script, let preferred = languagesByScript[script],
              let first = preferred.first(where: installed.contains) else { return fallback }
        return script == "Latin" || first == "eng" || !installed.contains("eng") ? [first] : [first, "eng"]
    }

    /// Detects the script of `image` and chooses; the finding fields say what was seen and why.
    static func choose(for image: Pix, resolution: Int, detector: LazyOrientationDetector,
                       installed: [String]) -> (languages: [String], seen: [(String, JSON)])
    {
        var fields: [(String, JSON)] = []
        var script: String?
        do throws(TesseractError) {
            if let osd = try detector.detector() {
                let found = try osd.detect(image, resolution: resolution > 0 ? resolution : nil)
                script = found.script.isEmpty ? nil : found.script
                fields += [("script", script.map { JSON($0) } ?? .null),
                           ("script_confidence", .rounded(found.scriptConfidence, places: 2))]
            } else {
                fields.append(("reason", "the OSD model is not installed"))
            }
        } catch {
            // Too little text to tell (a blank page, a photo): the default language reads it.
            fields.append(("reason", JSON(error.message)))
        }
        return (choose(script: script, installed: installed), fields)
    }
}
