import FarmCore
import Leptonica
import Tesseract

/// How a list of languages in priority order is read.
///
/// When the first language is Chinese or Japanese, the page is read with the unspaced languages alone, and the
/// runs of Latin words it finds are read again with the other languages: a combined chi_sim+eng model reads whole
/// Chinese lines as English noise (11.9% CER on the synthetic cjk set against 5.9% for chi_sim alone), while
/// chi_sim alone drops the spaces and case of English words. Otherwise all languages read the page together.
public struct LanguagePlan: Sendable, Equatable {
    public let primary: [String]
    public let secondary: [String]

    public init(_ languages: [String]) {
        if let first = languages.first, Scripts.isUnspacedLanguage(first) {
            primary = languages.filter(Scripts.isUnspacedLanguage)
            secondary = languages.filter { !Scripts.isUnspacedLanguage($0) }
        } else {
            primary = languages
            secondary = []
        }
    }

    /// The page is mainly Chinese or Japanese text.
    public var isUnspaced: Bool { primary.first.map(Scripts.isUnspacedLanguage) ?? false }
}

/// The real engine: Tesseract LSTM with languages in priority order.
public final class TesseractRecognizer: PageRecognizer {
    public static let stage = "recognize"
    /// The stage name of Tesseract's first reading when `auto` then gives the page to the neural engine: the page's
    /// timings keep what that reading cost beside the neural engine's own `recognize`, under a name of its own.
    public static let firstReadingStage = "first_reading"
    let engine: TesseractEngine
    private let secondary: TesseractEngine?
    private let configuration: EngineConfiguration
    public let plan: LanguagePlan
    public let engineName: String

    /// The factor by which `accurate` enlarges the page for its second reading (measured: docs/decisions/0032-level-fast-accurate.md).
    static let accurateScale = 1.4

    /// Engines for `languages`; without `languageCorrection` they load no word lists, so the beam search keeps
    /// what the network read (Tesseract's `lstm_use_matrix` off: the LSTM is loaded without its dictionary).
    public init(languages: [String] = ["eng"], languageCorrection: Bool = true, dataPath: String? = nil) throws(PageFailure) {
        plan = LanguagePlan(languages)
        do {
            let dictionary = languageCorrection ? [:] : ["lstm_use_matrix": "0"]
            let variables = dictionary.merging(["thresholding_method": Self.binarization(unspaced: plan.isUnspaced, other: false)]) { $1 }
            configuration = EngineConfiguration(languages: plan.primary, dataPath: dataPath, variables: variables)
            engine = try TesseractEngine(configuration)
            secondary = plan.secondary.isEmpty ? nil
                : try TesseractEngine(EngineConfiguration(languages: plan.secondary, dataPath: dataPath, variables: dictionary))
        } catch {
            throw PageFailure(stage: Self.stage, code: .ocrFailed, message: error.message)
        }
        engineName = "\(Self.version) \(languages.joined(separator: "+"))"
    }

    /// "tesseract 5.3.0": the engine as results and documents name it.
    public static var version: String { "tesseract \(TesseractInfo.version)" }

    /// Whether `result`'s words say whether a word list has them (`Word.fromDictionary`): Tesseract read it (or
    /// nothing did: a PDF page's own text). The neural engine has no word lists, so its words never say so.
    public static func flagsDictionaryWords(of result: PageResult) -> Bool {
        result.engine.map { $0.hasPrefix("tesseract") } ?? true
    }
    public var engineVersion: String { Self.version }
    /// The second reading reads weak pages as decoded, and table cells come from the file's own pixels.
    public var readsUncorrectedImage: Bool { true }

    public func recognize(_ page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> PageResult {
        try finish(try readFirst(page, options: options), page: page, options: options)
    }

    /// A page's first reading: the page as the engine reads it (small text removed, table rulings taken out) and
    /// what it read there. `finish` makes the page's result of it; `AutomaticRecognizer` weighs it first.
    struct FirstReading {
        let image: Pix
        let tables: [Leptonica.Box]
        let recognition: Recognition
        /// `recognition` as the page's model, before anything else is done to it.
        let result: PageResult
        /// When the page's reading began (the time limit covers every reading since).
        let start: UInt64
    }

    /// Reads the page once, as `recognize` begins.
    func readFirst(_ page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> FirstReading {
        let start = Clock.monotonicNanoseconds
        if options.candidates != engine.candidateCount { engine.candidateCount = options.candidates }
        var image = page.image
        if let fraction = options.minTextHeight {
            do throws(LeptonicaError) {
                image = try SmallText.removed(from: image, below: fraction).image
            } catch {
                throw PageFailure(stage: Self.stage, code: .internalError, message: "--min-text-height: \(error.description)")
            }
        }
        let tables: [Leptonica.Box]
        (image, tables) = try Self.tablePrepared(image)
        let recognition = try read(image, with: engine, resolution: page.declaredResolution, options: options, since: start)
        return FirstReading(image: image, tables: tables, recognition: recognition,
                            result: PageResult(recognition, resolution: page.declaredResolution), start: start)
    }

    /// Lets go of the engines' copies of the page (when a page's first reading is not finished).
    func releasePage() {
        engine.releasePage()
        secondary?.releasePage()
    }

    /// The page's result from its first reading: tables' cells, the second reading, the accurate level's readings,
    /// the secondary languages, the word corrections and the reading order.
    func finish(_ first: FirstReading, page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> PageResult {
        let (image, tables, recognition, start) = (first.image, first.tables, first.recognition, first.start)
        var result = first.result
        _ = Self.rereadTables(&result, image: image, tables: tables, with: engine, resolution: page.declaredResolution,
                              uncorrected: page.uncorrected)
        var findings: [(String, JSON)] = []
        if options.secondReading {
            let second = readSecondTime(&result, first: recognition, page: page, image: image, options: options, since: start)
            let blank = readBlankRegions(&result, image: image, resolution: page.declaredResolution)
            findings = [("second_reading", second), ("blank_regions", blank)]
        }
        if options.level == .accurate {
            findings.append(("recognize", try readAgain(&result, image: image, resolution: page.declaredResolution,
                                                        options: options, since: start)))
        }
        if !findings.isEmpty { result.findings = .object(findings) }
        if let secondary {
            result = rereadLatinRuns(result, image: image, with: secondary, resolution: page.declaredResolution)
        }
        if plan.isUnspaced { result = Self.normalizedUnspacedText(result, punctuation: options.languageCorrection) }
        if options.languageCorrection && !options.words.isEmpty {
            let corrected = CustomWords(options.words).correcting(result)
            if corrected.changed { result = corrected.result; result.text = Self.text(of: result) }
        }
        // Without language correction the characters are kept as read; Chinese confidences are on another scale.
        if options.languageCorrection && !plan.isUnspaced {
            let cleaned = NoiseWords.removed(from: result, keeping: Set(options.words))
            if cleaned.removed > 0 { result = cleaned.result; result.text = Self.text(of: result) }
            let lettered = LetterLookAlikes.corrected(result)
            if lettered.changed > 0 { result = lettered.result; result.text = Self.text(of: result) }
        }
        if result.arrangeInReadingOrder() { result.text = Self.text(of: result) }
        // The model holds all that is needed now; the engines' copies of the page are freed before the next one.
        releasePage()
        result.timings = [StageTiming(stage: Self.stage, milliseconds: Clock.milliseconds(since: start))]
        result.engine = Self.version
        return result
    }

    /// A word in Latin script: an ASCII letter, and nothing but ASCII and full-width punctuation.
    static func isLatin(_ word: String) -> Bool {
        word.contains { $0.isASCII && $0.isLetter } && word.allSatisfy { $0.isASCII || CJKPunctuation.fullWidthMarks.contains($0) }
    }

    /// Reads each run of Latin words on a line again with the secondary languages, one run at a time (the page
    /// image is given to the engine once for all runs).
    func rereadLatinRuns(_ result: PageResult, image: Pix, with reader: TesseractEngine, resolution: Int) -> PageResult {
        var result = result
        // First every run: where it is (block, paragraph, line, first and last word) and the box to read.
        var runs: [(b: Int, p: Int, l: Int, first: Int, last: Int, box: Leptonica.Box)] = []
        for b in result.blocks.indices {
            for p in result.blocks[b].paragraphs.indices {
                for l in result.blocks[b].paragraphs[p].lines.indices {
                    let line = result.blocks[b].paragraphs[p].lines[l]
                    var i = 0
                    while i < line.words.count {
                        guard Self.isLatin(line.words[i].text) else { i += 1; continue }
                        var j = i
                        while j + 1 < line.words.count && Self.isLatin(line.words[j + 1].text) { j += 1 }
                        let run = line.words[i...j]
                        var x0 = run.map(\.box.x).min()!, x1 = run.map(\.box.maxX).max()!
                        // The last Latin word's box often runs over the next Han characters: stop at the next word.
                        if j + 1 < line.words.count { x1 = min(x1, line.words[j + 1].box.x - 1) }
                        if i > 0 { x0 = max(x0, min(line.words[i].box.x, line.words[i - 1].box.maxX)) }
                        let pad = max(3, line.box.height / 8)
                        let box = Leptonica.Box(x: max(0, x0 - pad), y: max(0, line.box.y - pad),
                                                width: min(image.width, x1 + pad) - max(0, x0 - pad),
                                                height: min(image.height, line.box.maxY + pad) - max(0, line.box.y - pad))
                        if box.width > 4, box.height > 4 { runs.append((b, p, l, i, j, box)) }
                        i = j + 1
                    }
                }
            }
        }
        let rereads = reader.recognize(image, regions: runs.map(\.box), mode: .singleLine,
                                       resolution: resolution > 0 ? resolution : nil)
        // Then replace the runs, last first, so earlier word indices on a line stay valid.
        for (run, reread) in zip(runs, rereads).reversed() {
            guard let reread, !reread.words.isEmpty else { continue }
            let words = PageResult(reread, resolution: resolution).words
            result.blocks[run.b].paragraphs[run.p].lines[run.l].words.replaceSubrange(run.first...run.last, with: words)
        }
        return result
    }

    /// The `accurate` level's further readings: the page enlarged by `accurateScale`, and the page binarized the
    /// other way (Otsu and Sauvola); where one of them read a line with a higher confidence, its line replaces the
    /// first reading's (boxes mapped back).
    func readAgain(_ result: inout PageResult, image: Pix, resolution: Int, options: RecognitionOptions,
                   since start: UInt64) throws(PageFailure) -> JSON {
        let factor = Self.accurateScale
        let enlarged: Pix
        do throws(LeptonicaError) {
            enlarged = try image.resampled(by: factor)
        } catch {
            throw PageFailure(stage: Self.stage, code: .internalError, message: "--level accurate: \(error.description)")
        }
        // The enlarged page as the engine binarizes, then the page binarized the other way.
        let readings = [(false, enlarged, factor), (true, image, 1.0)]
        var replaced = 0
        for (otherBinarization, picture, scale) in readings {
            let previous = otherBinarization ? try useOtherBinarization() : nil
            defer { if let previous { restoreBinarization(previous) } }
            let reading = try read(picture, with: engine, resolution: Int((Double(resolution) * scale).rounded()),
                                   options: options, since: start)
            let again = PageResult(reading, resolution: resolution)
            replaced += result.adoptSurerLines(from: scale == 1 ? again : again.boxesScaled(by: 1 / scale))
        }
        if replaced > 0 { result.text = Self.text(of: result) }
        return .object([("level", "accurate"), ("readings", JSON(readings.count + 1)), ("lines", JSON(result.lines.count)),
                        ("lines_replaced", JSON(replaced))])
    }

    /// One reading of `image` by `reader`. The page's time limit covers all of its readings: each gets what is left
    /// of it since `start`, and none is begun once it is spent.
    func read(_ image: Pix, with reader: TesseractEngine, resolution: Int, options: RecognitionOptions,
                      since start: UInt64) throws(PageFailure) -> Recognition {
        var remaining = options.timeoutMilliseconds
        if let limit = options.timeoutMilliseconds {
            let left = limit - Int(Clock.milliseconds(since: start))
            guard left > 0 else {
                throw PageFailure(stage: Self.stage, code: .timeout,
                                  message: "recognition stopped after the page's time limit of \(limit) ms", retryable: true)
            }
            remaining = left
        }
        do {
            // No input name: Tesseract would read a `.uzn` zone file beside the source as the page's layout, from
            // a folder anyone submitting may write (zones off the page abort the worker; others misread it).
            return try reader.recognize(image, resolution: resolution > 0 ? resolution : nil, timeoutMilliseconds: remaining,
                                        inputName: nil)
        } catch {
            let code: FailureCode = error.kind == .timeout ? .timeout : .ocrFailed
            throw PageFailure(stage: Self.stage, code: code, message: error.message, retryable: error.kind == .timeout)
        }
    }

    /// Switches the primary engine to the other binarization (Sauvola for spaced scripts, Otsu for Chinese) and
    /// returns the method it had, for `restoreBinarization`. One engine per slot: a second engine kept for this
    /// held its own copy of the models, about 24 MB a slot (a worker's peak 133 MB for one slot against 105).
    func useOtherBinarization() throws(PageFailure) -> String {
        // Tesseract reads back only string variables, so the method the engine was made with comes from the plan.
        let previous = Self.binarization(unspaced: plan.isUnspaced, other: false)
        guard engine.setVariable("thresholding_method", Self.binarization(unspaced: plan.isUnspaced, other: true)) else {
            throw PageFailure(stage: Self.stage, code: .ocrFailed, message: "Tesseract refused thresholding_method")
        }
        return previous
    }

    /// Tesseract's `thresholding_method` for a script: Otsu (0) for spaced scripts and Sauvola (2) for Chinese,
    /// which it reads slightly better (measured on both synthetic cjk sets); `other` gives the one a second reading
    /// tries.
    static func binarization(unspaced: Bool, other: Bool) -> String {
        unspaced != other ? "2" : "0"
    }

    func restoreBinarization(_ previous: String) {
        _ = engine.setVariable("thresholding_method", previous)
    }

    /// No spaces between unspaced characters, and (with language correction) full-width punctuation restored
    /// in Chinese context.
    static func normalizedUnspacedText(_ result: PageResult, punctuation: Bool = true) -> PageResult {
        var result = result
        guard punctuation else { result.text = text(of: result); return result }
        result.updateLines { line in
            for (index, text) in CJKPunctuation.normalize(line.words.map(\.text)).enumerated() {
                line.words[index].text = text
            }
        }
        result.text = text(of: result)
        return result
    }

    /// The page's text from its model: a line per line, a blank line between paragraphs (as Tesseract writes it).
    static func text(of result: PageResult) -> String {
        result.blocks.flatMap(\.paragraphs).map { paragraph in
            paragraph.lines.map { Scripts.join($0.words.map(\.text)) + "\n" }.joined()
        }.joined(separator: "\n")
    }
}

extension PageResult {
    /// The domain model of a Tesseract recognition.
    init(_ recognition: Recognition, resolution: Int) {
        func rect(_ box: Leptonica.Box) -> Rect { Rect(x: box.x, y: box.y, width: box.width, height: box.height) }
        let blocks = recognition.blocks.map { block in
            Block(box: rect(block.box), kind: block.kind.rawValue, paragraphs: block.paragraphs.map { paragraph in
                Paragraph(box: rect(paragraph.box), lines: paragraph.lines.map { line in
                    Line(box: rect(line.box), words: line.words.map { word in
                        Word(text: word.text, box: rect(word.box), confidence: word.confidence,
                             candidates: word.candidates.map { Candidate(text: $0.text, confidence: $0.confidence) },
                             language: word.language, fromDictionary: word.isFromDictionary)
                    })
                })
            })
        }
        self.init(width: recognition.width, height: recognition.height, resolution: resolution,
                  text: recognition.text, meanConfidence: recognition.meanConfidence, blocks: blocks)
    }
}
