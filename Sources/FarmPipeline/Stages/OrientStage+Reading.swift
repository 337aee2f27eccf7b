import FarmCore
import Leptonica
import Tesseract

/// The third judge: when OSD and the letter shapes disagree, or are weak, or OSD names a script the page's
/// languages cannot have, a sample of the page is read in each candidate orientation and the surest reading wins.
/// Text read the right way up comes out as words the engine is sure of; turned text comes out as low-confidence
/// fragments, whatever the script or layout, so the comparison needs no threshold tuned to one kind of page.
extension OrientStage {
    /// How one candidate orientation read.
    struct CandidateReading: Equatable {
        /// Clockwise quarter turns from the page as it is.
        let turns: Int
        /// Mean word confidence (0–100), each word weighted by its letters and digits.
        let score: Double
        /// Letters and digits read.
        let characters: Int
        /// Share of those characters in words the engine found in its word lists.
        let dictionaryShare: Double

        /// Confidence-weighted letters and digits read (`score` × `characters` / 100): text read the right way up
        /// comes out both surer and longer (turned lines break into fragments and specks read as nothing).
        var weight: Double { score * Double(characters) / 100 }

        var json: JSON {
            .object([("rotation", JSON(turns * 90)), ("score", .rounded(score)), ("characters", JSON(characters)),
                     ("dictionary", .rounded(dictionaryShare, places: 2))])
        }
    }

    /// A winner must read at least this many letters and digits...
    static let readingMinimumCharacters = 12
    /// ...and be this many confidence points surer than every other orientation read (upright text reads at
    /// 50–95, turned text at 10–45 on the pages measured, so a real turn clears this and a close call stays put)...
    static let readingMargin = 12.0
    /// ...and be a reading the engine is more sure of than not (receipts and tables read upright at 50–60).
    static let readingSure = 50.0
    /// The side of the square sample, in median glyph sizes (about a dozen lines of two dozen characters).
    static let sampleGlyphs = 22.0
    /// Glyphs smaller than this (in pixels of the working copy) are read from a sample enlarged twice: Tesseract
    /// reads small text poorly whichever way it is turned, which hides the difference the readings measure.
    static let smallGlyph = 16.0

    /// The side of the wider sample read when the first leaves no clear answer: four times the area, since a
    /// table's sparse cells put few words in the first.
    static let widerSampleGlyphs = 44.0
    /// The glyph size (pixels) small print is enlarged to for the wider sample, at most 4× (Tesseract reads text
    /// of 7–9 px glyphs, a table crop's, poorly every way up; enlarged, the upright way reads clearly better).
    static let readingGlyph = 32.0
    /// A weighed winner needs this many times the weight of every other orientation read...
    static let weightRatio = 1.4
    /// ...and a mean confidence of at least this (a reading surer than not of a third of its letters).
    static let weightedSure = 30.0

    /// The scores of a reading: letter-weighted mean confidence and the dictionary share.
    static func candidateReading(turns: Int, words: [RecognizedWord]) -> CandidateReading {
        var weighted = 0.0, characters = 0, fromDictionary = 0
        for word in words {
            let count = word.text.reduce(0) { $0 + ($1.isLetter || $1.isNumber ? 1 : 0) }
            guard count > 0 else { continue }
            weighted += word.confidence * Double(count)
            characters += count
            if word.isFromDictionary { fromDictionary += count }
        }
        return CandidateReading(turns: turns, score: characters > 0 ? weighted / Double(characters) : 0,
                                characters: characters,
                                dictionaryShare: characters > 0 ? Double(fromDictionary) / Double(characters) : 0)
    }

    /// The quarter turns the readings support: a clear winner (sure, and surer than every other orientation read
    /// by the margin), else 0.
    static func decided(by readings: [CandidateReading]) -> Int {
        guard let best = winner(readings), best.turns != 0 else { return 0 }
        return best.turns
    }

    /// The reading that is sure and clearly surer than all the others; nil when there is none.
    static func winner(_ readings: [CandidateReading]) -> CandidateReading? {
        guard let best = readings.filter({ $0.characters >= readingMinimumCharacters }).max(by: { $0.score < $1.score }),
              best.score >= readingSure,
              readings.allSatisfy({ $0.turns == best.turns || best.score - $0.score >= readingMargin }) else { return nil }
        return best
    }

    /// The quarter turns the wider readings support by weight: the heaviest reading, when it has read enough, is
    /// sure enough, and outweighs every other orientation `weightRatio` times; else 0.
    static func decidedByWeight(_ readings: [CandidateReading]) -> Int {
        guard let best = readings.max(by: { $0.weight < $1.weight }), best.turns != 0,
              best.characters >= readingMinimumCharacters, best.score >= weightedSure,
              readings.allSatisfy({ $0.turns == best.turns || best.weight >= weightRatio * $0.weight }) else { return 0 }
        return best.turns
    }

    /// Whether the page as it is reads clearly surer than every other orientation read.
    static func clearlyUpright(_ readings: [CandidateReading]) -> Bool {
        readings.count > 1 && winner(readings)?.turns == 0
    }

    /// The part of `binary` (1-bit working copy) to read: a square about `glyphs` glyphs on a side where
    /// glyph-sized components are densest. A square holds the same text however the page is turned. Nil when the
    /// page has no glyph-like ink.
    static func sampleBox(_ binary: Pix, glyphs: Double = sampleGlyphs) throws(LeptonicaError) -> (box: Box, glyph: Double)? {
        let boxes = try binary.componentBoxes(grownBy: 1, 1).filter { box in
            let long = max(box.width, box.height), short = min(box.width, box.height)
            // Glyph-like in any orientation: not a speck, not a rule, not a picture.
            return long >= 5 && long <= 150 && short * 6 >= long
        }
        guard boxes.count >= 8 else { return nil }
        let sizes = boxes.map { Double(max($0.width, $0.height)) }.sorted()
        let glyph = sizes[sizes.count / 2]
        let side = Int(glyph * glyphs)
        let width = min(binary.width, side), height = min(binary.height, side)
        // Windows on a grid of half a side; the one holding the most glyph centres wins.
        let stepX = max(1, width / 2), stepY = max(1, height / 2)
        var best = Box(x: 0, y: 0, width: width, height: height), bestCount = -1
        var y = 0
        while true {
            var x = 0
            while true {
                let count = boxes.reduce(0) { total, box in
                    let cx = box.x + box.width / 2, cy = box.y + box.height / 2
                    return total + (cx >= x && cx < x + width && cy >= y && cy < y + height ? 1 : 0)
                }
                if count > bestCount { bestCount = count; best = Box(x: x, y: y, width: width, height: height) }
                if x + width >= binary.width { break }
                x = min(x + stepX, binary.width - width)
            }
            if y + height >= binary.height { break }
            y = min(y + stepY, binary.height - height)
        }
        return (best, glyph)
    }

    /// Reads the sample of `gray` (the working copy), `glyphs` median glyphs on a side, in each candidate
    /// orientation. Glyphs under `smallGlyph` are enlarged twice, or to `enlargedTo` pixels when that is more (at
    /// most 4×).
    static func readings(of gray: Pix, binary: Pix, candidates: [Int], engine: TesseractEngine, resolution: Int?,
                         glyphs: Double = sampleGlyphs, enlargedTo: Double = 0) throws(LeptonicaError) -> [CandidateReading]
    {
        guard let (box, glyph) = try sampleBox(binary, glyphs: glyphs) else { return [] }
        var sample = try gray.cropped(to: box)
        var ppi = resolution
        if glyph < smallGlyph {
            let factor = min(4, max(2, enlargedTo / glyph))
            sample = try sample.scaled(by: factor)
            ppi = ppi.map { Int((Double($0) * factor).rounded()) }
        }
        defer { engine.releasePage() }
        return try candidates.map { turns throws(LeptonicaError) in
            let turned = turns == 0 ? sample : try sample.rotatedOrthogonally(quarterTurns: turns)
            // A sample that cannot be read counts as read with no confidence: it never wins.
            let words = (try? engine.recognize(turned, resolution: ppi))?.words ?? []
            return candidateReading(turns: turns, words: words)
        }
    }

    /// Whether a page in `languages` can be written in `script` (OSD's script name). Languages this table does
    /// not know could be in any script.
    static func canHave(script: String, languages: [String]) -> Bool {
        var scripts: Set<String> = []
        for language in languages {
            let known = AutomaticLanguage.languagesByScript.filter { $0.value.contains(language) }.map(\.key)
            if known.isEmpty { return true }
            scripts.formUnion(known)
        }
        // Latin languages were once set in Fraktur; Japanese mixes Han and kana.
        if scripts.contains("Latin") { scripts.insert("Fraktur") }
        if scripts.contains("Japanese") { scripts.formUnion(["Han", "Katakana", "Hiragana"]) }
        return scripts.contains(script)
    }

    /// The direction the letter shapes lean, even when they do not decide: nil when they hardly say anything.
    static func leaning(up: Double, left: Double) -> Int? {
        guard max(abs(up), abs(left)) >= leaningEvidence else { return nil }
        return abs(up) >= abs(left) ? (up > 0 ? 0 : 2) : (left > 0 ? 1 : 3)
    }
    /// Letter-shape evidence below which the shapes are silent (Leptonica counts |up| < 2 as noise).
    static let leaningEvidence = 2.0
}

/// The engine that reads orientation samples: made in the page's languages when a page first needs it, kept for
/// the next, and replaced when a page comes in other languages. Single block, no alternatives: small and fast.
/// Not `Sendable`: one per page slot (held by the slot's `LazyOrientationDetector`).
final class SampleReader {
    private var engine: TesseractEngine?
    private var failed: Set<[String]> = []

    /// The engine for `languages` (nil when their data cannot be loaded: the page is then not read).
    func engine(for languages: [String]) -> TesseractEngine? {
        if let engine, engine.configuration.languages == languages { return engine }
        guard !failed.contains(languages) else { return nil }
        engine = nil
        do throws(TesseractError) {
            engine = try TesseractEngine(EngineConfiguration(languages: languages, pageSegmentationMode: .singleBlock))
        } catch {
            failed.insert(languages)
        }
        return engine
    }

    var isLoaded: Bool { engine != nil }
}
