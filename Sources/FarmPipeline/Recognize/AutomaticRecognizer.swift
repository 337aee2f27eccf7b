import FarmCore

/// `--engine auto`: each page is read by the engine its own evidence favours. Small print (a body x-height under
/// `ScaleStage.targetXHeight`, as the scale stage measured it, or enlarged `smallPrintEnlargement` or more) goes to
/// the neural engine unread by Tesseract. Otherwise Tesseract reads the page once; when
/// that reading is sure enough of itself for the page's length (`EngineEvidence`), Tesseract finishes the page (its
/// second reading, tables, word corrections), so a clean page costs what it costs with `--engine tesseract`; when the
/// reading is weak, the neural engine reads the page instead, if its symbols can write the page's languages
/// (`LanguageCoverage`) and they are spaced (Chinese and Japanese stay with Tesseract).
/// The choice and its evidence are the page's `engine` finding. Where the neural engine is not installed at all,
/// every page is Tesseract's and the finding says `"neural": "not installed"` on pages it would have gone to.
///
/// Owns a Tesseract recognizer and, made when a page first needs it, a neural one; both used on the slot's thread.
public final class AutomaticRecognizer: PageRecognizer {
    private let tesseract: TesseractRecognizer
    /// Makes the neural engine; nil when it is not installed.
    private let makeNeural: (() throws(PageFailure) -> any NeuralReader)?
    private var neural: (any NeuralReader)?
    private let languages: [String]
    /// The correction stages the neural engine reads without (`PageRecognizer.stagesLeftOut`).
    private let neuralStagesLeftOut: Set<CorrectionStage>
    /// Whether the neural engine writes `languages`, with each language's share of letters, once known.
    private var coverage: (writes: Bool, shares: [(String, Double)])?

    public init(tesseract: TesseractRecognizer, neural: (() throws(PageFailure) -> any NeuralReader)?, languages: [String],
                neuralStagesLeftOut: Set<CorrectionStage> = NeuralRecognizer.correctionsLeftOut)
    {
        self.tesseract = tesseract
        self.makeNeural = neural
        self.languages = languages
        self.neuralStagesLeftOut = neuralStagesLeftOut
    }

    public var engineName: String { "auto (\(tesseract.engineName)\(neural.map { ", " + $0.engineName } ?? ""))" }
    public var engineVersion: String { "auto" }
    public var readsUncorrectedImage: Bool { true }
    /// Tesseract reads the fully corrected page; the neural engine, when chosen, the page before the stages it leaves
    /// out (the table fixture's F1 0.835 read after them, 0.968 before).
    public var stagesMaybeLeftOut: Set<CorrectionStage> { neuralStagesLeftOut }

    /// The enlargement (body x-height brought to `ScaleStage.targetXHeight`) from which the print is small enough for
    /// the neural engine to read the page without Tesseract's first reading: 2× is an x-height of 8 px or less, the
    /// print of table crops and low-resolution scans, which Tesseract reads weakly however enlarged (pubtabnet-sample:
    /// every crop enlarged 2.3–2.5×, Tesseract F1 0.724 against the neural engine's 0.98; paper pages 1.0–1.4×).
    static let smallPrintEnlargement = 2.0

    public func recognize(_ page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> PageResult {
        var finding: [(String, JSON)] = []
        var first: TesseractRecognizer.FirstReading?
        var chosen: Bool
        var page = page
        let enlargement = Self.enlargement(of: page)
        if enlargement < Self.smallPrintEnlargement, page.measuredTextSize == nil {
            page.measuredTextSize = (try? TextSize.estimate(page.lessCorrected ?? page.image)) ?? nil
        }
        let xHeight = enlargement >= Self.smallPrintEnlargement ? nil : page.measuredTextSize?.xHeight
        if enlargement >= Self.smallPrintEnlargement {
            finding.append(("small_print", .object([("enlarged", .rounded(enlargement, places: 2))])))
            chosen = true
        } else if let xHeight, xHeight < ScaleStage.targetXHeight {
            finding.append(("small_print", .object([("x_height", .rounded(xHeight, places: 1))])))
            chosen = true
        } else {
            let reading = try tesseract.readFirst(page, options: options)
            first = reading
            let evidence = EngineEvidence(reading.result)
            finding.append(("evidence", evidence.json))
            chosen = evidence.favoursNeural
        }
        if chosen { chosen = try neuralWrites(&finding) }
        var result: PageResult
        if chosen {
            if let first {
                tesseract.releasePage()
                // Tesseract's dictionary saw the page: whether it read as its language (`MissingLanguage`).
                finding.append((MissingLanguage.firstReadingKey, JSON(MissingLanguage.readsAsItsLanguage(first.result))))
            }
            result = try readNeural(page, options: options)
            if let first {
                // Tesseract's first reading is part of the page's cost: it stays in the timings under its own stage.
                result.timings.insert(StageTiming(stage: TesseractRecognizer.firstReadingStage, milliseconds: Clock.milliseconds(since: first.start)
                                                  - result.timings.reduce(0) { $0 + $1.milliseconds }), at: 0)
            }
        } else {
            let reading: TesseractRecognizer.FirstReading
            if let first { reading = first } else { reading = try tesseract.readFirst(page, options: options) }
            result = try tesseract.finish(reading, page: page, options: options)
        }
        finding.insert(("chosen", JSON(chosen ? ReadingEngine.neural.rawValue : ReadingEngine.tesseract.rawValue)), at: 0)
        var findings: [(String, JSON)] = [("engine", .object(finding))]
        if case .object(let recognized) = result.findings { findings += recognized }
        result.findings = .object(findings)
        return result
    }

    /// Whether the neural engine writes the page's languages: not Chinese or Japanese (its lines come out of order
    /// there) and its symbols hold their letters (`LanguageCoverage`); why not is added to `finding`.
    private func neuralWrites(_ finding: inout [(String, JSON)]) throws(PageFailure) -> Bool {
        if LanguagePlan(languages).isUnspaced {
            // Chinese and Japanese: the neural engine reads the characters (synthetic cjk F1 0.999 against 0.958) but
            // its lines come out of order (CER 25% against Tesseract's 2.4%), so Tesseract reads them.
            finding.append(("unspaced", true))
            return false
        }
        guard makeNeural != nil else {
            finding.append(("neural", "not installed"))
            return false
        }
        let reader = try neuralReader()
        let coverage = self.coverage ?? LanguageCoverage.writes(languages, with: reader.symbols)
        self.coverage = coverage
        if !coverage.writes {
            finding.append(("not_written", .object(coverage.shares.filter { $0.1 < LanguageCoverage.writableShare }
                .map { ($0.0, .rounded($0.1, places: 3)) })))
        }
        return coverage.writes
    }

    /// The neural engine's reading of the page before the stages it leaves out, its boxes on the corrected page
    /// (those stages change only the page's size).
    private func readNeural(_ page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> PageResult {
        guard let lessCorrected = page.lessCorrected else { return try neuralReader().recognize(page, options: options) }
        let factor = Self.enlargement(of: page)
        var input = DecodedPage(image: lessCorrected, format: page.format,
                                declaredResolution: Int((Double(page.declaredResolution) / factor).rounded()),
                                exifOrientation: page.exifOrientation)
        input.measuredTextSize = page.measuredTextSize
        var result = try neuralReader().recognize(input, options: options)
        guard lessCorrected.width != page.image.width || lessCorrected.height != page.image.height else { return result }
        result = result.boxesScaled(by: factor)
        // The page read and the page shown are the same size, whatever the rounding of the scaled sides.
        result.width = page.image.width
        result.height = page.image.height
        result.resolution = page.declaredResolution
        return result
    }

    /// How much the stages the neural engine reads without enlarged the page (1 when none ran).
    private static func enlargement(of page: DecodedPage) -> Double {
        page.lessCorrected.map { Double(page.image.width) / Double(max(1, $0.width)) } ?? 1
    }

    private func neuralReader() throws(PageFailure) -> any NeuralReader {
        if let neural { return neural }
        guard let makeNeural else {
            throw PageFailure(stage: TesseractRecognizer.stage, code: .ocrFailed, message: "the neural engine is not installed")
        }
        let made = try makeNeural()
        neural = made
        return made
    }
}

/// A neural recognizer as `AutomaticRecognizer` uses it: a recognizer that says which symbols it can write.
public protocol NeuralReader: PageRecognizer {
    /// Every character the engine's dictionary has.
    var symbols: Set<Character> { get }
}

/// What a page's first Tesseract reading says about which engine should read the page: how sure Tesseract was of
/// its words, measured per character so that a few long sure words do not hide many short unsure ones.
public struct EngineEvidence: Sendable, Equatable {
    /// Characters in the reading's words.
    public var characters: Int
    /// The share of those characters in words Tesseract was unsure of (confidence below `weakConfidence`).
    public var weakShare: Double
    /// The mean word confidence, weighted by characters (0–100).
    public var confidence: Double

    /// A word below this confidence is unsure (Tesseract's 0–100 scale).
    static let weakConfidence = 80.0
    /// The share of characters in unsure words above which the neural engine reads a page grows by this much for
    /// each thousand characters read: the neural engine's gain is largest where Tesseract doubts its reading, while
    /// its time grows with the page's text (2× Tesseract's on a receipt, 3–6× on a full paper page), so a long page
    /// must be more doubtful to be worth it. The price lies between what the dev sets allow on both sides: every
    /// receipt of sroie-sample (450–1,000 characters, 12–74% unsure; the neural engine better on 38 of 42) and
    /// eurotext (349 characters, 7% unsure; F1 0.932 → 1.000) go to the neural engine below 0.2; of the first ten
    /// synthetic clean pages, the two Tesseract is least sure of (2,100–2,500 characters, 23–31% unsure) stay with it
    /// above 0.13, as `Scripts/bench/ocr --engine auto`'s speed target asks (over the whole clean set a few such pages
    /// still go to the neural engine: CPU 2.70 s/page against 2.02, CER 0.08% → 0.06%). Checked on DocBank pages 21–50, which no constant
    /// was chosen on: 6 of 30 go to the neural engine, each better read by it (F1 +0.015 to +0.19).
    static let neuralSharePerThousand = 0.15
    /// A page with fewer characters than this read is weak whatever their confidence (the layout found no text
    /// where the neural detector might).
    static let fewCharacters = 20

    /// The share of unsure characters above which the neural engine reads a page of `characters`.
    static func neuralShare(characters: Int) -> Double {
        neuralSharePerThousand * Double(characters) / 1000
    }

    public init(_ reading: PageResult) {
        var characters = 0, weak = 0
        var weighted = 0.0
        for word in reading.words {
            let count = word.text.count
            characters += count
            weighted += word.confidence * Double(count)
            if word.confidence < Self.weakConfidence { weak += count }
        }
        self.characters = characters
        weakShare = characters == 0 ? 1 : Double(weak) / Double(characters)
        confidence = characters == 0 ? 0 : weighted / Double(characters)
    }

    /// Whether the neural engine should read the page.
    public var favoursNeural: Bool {
        characters < Self.fewCharacters || weakShare > Self.neuralShare(characters: characters)
    }

    public var json: JSON {
        .object([("characters", JSON(characters)), ("weak_share", .rounded(weakShare, places: 3)),
                 ("confidence", .rounded(confidence, places: 1))])
    }
}
