import FarmCore
import Leptonica
import ONNXRuntime
import FarmRuntime

/// The neural reading engine: PP-OCRv6-small's text detector and line classifier, PP-OCRv6-tiny's recognizer and,
/// for the lines it is unsure of, PP-OCRv6-small's, run by ONNX Runtime.
/// Lines are found, cut out upright, read, split into words with boxes on the page, and laid out by ocrfarm's
/// reading order. Owns the runtime and its four sessions, made once and released with it; one recognizer per
/// page slot, used on that slot's thread only (ONNX Runtime gets one intra-op and one inter-op thread).
public final class NeuralRecognizer: PageRecognizer {
    public static let stage = "recognize"
    public let engineName: String
    /// The runtime stays loaded as long as a session made from it lives.
    let runtime: ONNXRuntime
    let detector: TextDetector
    let classifier: LineClassifier
    let recognizer: TextRecognizer
    /// PP-OCRv6-tiny's recognizer: it reads every line first, at a quarter of the small one's time; a line it is
    /// unsure of is read again by `recognizer`.
    let quickRecognizer: TextRecognizer

    /// The reference pipeline's `text_score`: a line read with a lower mean character probability is dropped.
    static let minimumLineConfidence = 0.5
    /// A line the tiny recognizer reads with a lower mean character probability is read again by the small one.
    /// Chosen on sroie-sample and DocBank pages 21–30 (0.9: SROIE F1 0.916 against the small recognizer's 0.955, tiny
    /// sure of misread dot-matrix lines; 0.97: 0.944, DocBank 0.917 against 0.914 at 62% of the CPU) and checked on
    /// the DocBank pages and table crops it was not chosen on (decision 0076).
    static let sureLineConfidence = 0.97

    /// Loads the runtime and the four models; a failure names the file.
    public init(models: NeuralModels) throws(PageFailure) {
        func failure(_ error: ONNXRuntimeError, _ path: String) -> PageFailure {
            PageFailure(stage: Self.stage, code: .ocrFailed, message: "\(path): \(error.description)")
        }
        do {
            runtime = try ONNXRuntime.load(libraryPath: models.runtimePath)
        } catch {
            throw failure(error, models.runtimePath)
        }
        var options = SessionOptions()
        options.intraOpThreads = 1
        options.interOpThreads = 1
        options.cpuMemoryArena = false
        do {
            detector = TextDetector(session: try InferenceSession(runtime: runtime, modelPath: models.detectorPath, options: options))
        } catch {
            throw failure(error, models.detectorPath)
        }
        do {
            classifier = LineClassifier(session: try InferenceSession(runtime: runtime, modelPath: models.classifierPath, options: options))
        } catch {
            throw failure(error, models.classifierPath)
        }
        do {
            recognizer = try TextRecognizer(session: InferenceSession(runtime: runtime, modelPath: models.recognizerPath, options: options))
        } catch {
            throw failure(error, models.recognizerPath)
        }
        let quickDictionary: String
        do {
            quickDictionary = Self.dictionary(try FileSystem.readText(models.quickDictionaryPath))
        } catch {
            throw PageFailure(stage: Self.stage, code: .ocrFailed, message: "\(models.quickDictionaryPath): \(error)")
        }
        do {
            quickRecognizer = try TextRecognizer(session: InferenceSession(runtime: runtime, modelPath: models.quickRecognizerPath, options: options),
                                                 dictionary: quickDictionary)
        } catch {
            throw failure(error, models.quickRecognizerPath)
        }
        engineName = NeuralModels.engineName(runtimeVersion: runtime.version)
    }

    /// A dictionary file's symbols as the `character` metadata has them: one a line, split at line feeds only. The
    /// tiny recognizer's file ends its lines with CR LF and the last one too.
    static func dictionary(_ file: String) -> String {
        var lines = file.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
    }

    public func recognize(_ page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> PageResult {
        var clock = PageClock(start: Clock.monotonicNanoseconds, limit: options.timeoutMilliseconds)
        let width = page.image.width, height = page.image.height
        let image: NeuralImage
        do throws(LeptonicaError) {
            image = try NeuralImage(page.image)
        } catch {
            throw PageFailure(stage: Self.stage, code: .internalError, message: "neural engine: cannot read the page's pixels: \(error.description)")
        }
        try clock.check()
        let found = try detect(page, image: image, minTextHeight: options.minTextHeight)
        var crops = found.regions.compactMap { LineCrop($0, of: image) }
        clock.record("detect_ms")
        let reading = try read(&crops, clock: &clock)
        let (detected, onInk) = Self.lines(crops: crops, readings: reading.readings,
                                           pageBounds: Rect(x: 0, y: 0, width: width, height: height), candidates: options.candidates)
        // A figure's labels are left out of the text, as Tesseract's layout leaves them (FigureRegions).
        let figureLabels = Set(FigureRegions.labels(detected, on: image))
        let lines = detected.indices.filter { !figureLabels.contains($0) }.map { detected[$0] }

        let words = lines.flatMap(\.words)
        let mean = words.isEmpty ? 0 : words.map(\.confidence).reduce(0, +) / Double(words.count)
        var result = PageResult(width: width, height: height, resolution: page.declaredResolution, text: "",
                                meanConfidence: mean, blocks: LineLayout.blocks(LineLayout.joinedRows(lines)))
        if options.languageCorrection && !options.words.isEmpty {
            result = CustomWords(options.words).correcting(result).result
        }
        result.arrangeInReadingOrder()
        result.placeOnInk(onInk)
        result.text = TesseractRecognizer.text(of: result)
        result.findings = .object([("recognize", .object([
            ("engine", JSON(engineName)), ("regions", JSON(found.regions.count)), ("lines", JSON(lines.count)), ("figure_labels", JSON(figureLabels.count)),
            ("turned", JSON(reading.turned)), ("doubted", JSON(reading.doubted)), ("read_again", JSON(reading.readAgain)),
            ("x_height", found.textSize.map { .rounded($0.xHeight, places: 1) } ?? .null),
            ("detector_input", .array([JSON(found.plan.inputWidth), JSON(found.plan.inputHeight)])),
        ] + clock.spent))])
        result.timings = [StageTiming(stage: Self.stage, milliseconds: Clock.milliseconds(since: clock.start))]
        result.engine = engineName
        return result
    }

    /// A page's time: its limit, checked before each model run, and where it went (for the page's findings).
    struct PageClock {
        let start: UInt64
        let limit: Int?
        private var lap: UInt64
        private(set) var spent: [(String, JSON)] = []

        init(start: UInt64, limit: Int?) {
            self.start = start
            self.limit = limit
            lap = start
        }

        /// Stops the page once its time limit is spent.
        func check() throws(PageFailure) {
            guard let limit, Int(Clock.milliseconds(since: start)) >= limit else { return }
            throw PageFailure(stage: NeuralRecognizer.stage, code: .timeout,
                              message: "recognition stopped after the page's time limit of \(limit) ms", retryable: true)
        }

        /// Records the time since the last lap under `name`.
        mutating func record(_ name: String) {
            spent.append((name, .rounded(Clock.milliseconds(since: lap), places: 1)))
            lap = Clock.monotonicNanoseconds
        }
    }

    private static func failure(_ error: ModelRunError<PageFailure>) -> PageFailure {
        switch error {
        case .stopped(let failure): return failure
        case .runtime(let error): return PageFailure(stage: Self.stage, code: .ocrFailed, message: error.description)
        }
    }

    /// The page's text regions, found on a detector input sized by the body text's size (large print is found on a
    /// smaller input); regions lower than `minTextHeight` of the page left out.
    private func detect(_ page: DecodedPage, image: NeuralImage, minTextHeight: Double?) throws(PageFailure)
        -> (regions: [TextRegion], plan: TextDetector.InputPlan, textSize: TextSize.Estimate?)
    {
        let measured = page.lessCorrected == nil ? page.measuredTextSize : nil
        let textSize = measured ?? ((try? TextSize.estimate(page.image)) ?? nil)
        let pagePlan = detector.inputPlan(width: page.image.width, height: page.image.height, xHeight: textSize?.xHeight)
        var regions: [TextRegion]
        let plan: TextDetector.InputPlan
        do { (regions, plan) = try detector.inkedRegions(of: image, plan: pagePlan) } catch {
            throw PageFailure(stage: Self.stage, code: .ocrFailed, message: error.description)
        }
        if let fraction = minTextHeight {
            // A line's height is its region's short side.
            regions.removeAll { region in
                let c = region.corners
                return min(c[0].distance(to: c[3]), c[0].distance(to: c[1])) < fraction * Double(page.image.height)
            }
        }
        return (regions, plan, textSize)
    }

    /// Reads each line, turned a half turn where the classifier says it is upside down and that reading is the
    /// surer one (`crops` turned to match).
    private func read(_ crops: inout [LineCrop], clock: inout PageClock) throws(PageFailure)
        -> (readings: [TextRecognizer.Reading], doubted: Int, turned: Int, readAgain: Int)
    {
        let check = clock.check
        let turned: [Bool]
        do { turned = try classifier.upsideDown(crops.map(\.image), checkTime: check) } catch { throw Self.failure(error) }
        clock.record("crop_classify_ms")
        // The classifier sees a line squeezed into 192 pixels and calls some long upright lines of clean print upside
        // down (5 of 26 lines of a synthetic clean page): a line it turns is read both ways, and the surer reading kept.
        let doubted = crops.indices.filter { turned[$0] }
        let halfTurned = doubted.map { index in
            var crop = crops[index]
            crop.turnHalf()
            return crop
        }
        let all = crops + halfTurned
        var readings: [TextRecognizer.Reading]
        do { readings = try quickRecognizer.read(all.map(\.image), checkTime: check) } catch { throw Self.failure(error) }
        clock.record("quick_read_ms")
        let unsure = readings.indices.filter { readings[$0].line.confidence < Self.sureLineConfidence }
        let again: [TextRecognizer.Reading]
        do { again = try recognizer.read(unsure.map { all[$0].image }, checkTime: check) } catch { throw Self.failure(error) }
        for (index, reading) in zip(unsure, again) { readings[index] = reading }
        var turnedCount = 0
        for (offset, index) in doubted.enumerated() {
            let other = readings[crops.count + offset]
            if other.line.confidence > readings[index].line.confidence {
                crops[index] = halfTurned[offset]
                readings[index] = other
                turnedCount += 1
            }
        }
        readings.removeLast(halfTurned.count)
        clock.record("read_ms")
        return (readings, doubted.count, turnedCount, unsure.count)
    }

    /// The page's lines of words, boxes on the page, and each word's box on its line's ink (`LineCrop.inkRows`) by
    /// its box on the detector's region. The layout groups rows and columns on the regions (as the reference
    /// pipeline does: on boxes trimmed to the ink, the table crops' rows joined worse, pubtabnet CER 11.9% -> 14.9%),
    /// and the documents get the ink's boxes.
    private static func lines(crops: [LineCrop], readings: [TextRecognizer.Reading], pageBounds: Rect, candidates: Int)
        -> (lines: [Line], onInk: [Rect: Rect])
    {
        var lines: [Line] = []
        var onInk: [Rect: Rect] = [:]
        for (crop, reading) in zip(crops, readings) {
            guard reading.line.confidence >= Self.minimumLineConfidence,
                  let lineBox = crop.pageBox(from: 0, to: Double(crop.image.width), within: pageBounds) else { continue }
            let rows = crop.inkRows
            let inkBox = rows.flatMap { crop.pageBox(from: 0, to: Double(crop.image.width), rows: $0, within: pageBounds) }
            let words = reading.line.words(stepWidth: reading.stepWidth, cropWidth: Double(crop.image.width)).compactMap { word -> Word? in
                guard let box = crop.pageBox(from: word.start, to: word.end, within: lineBox) else { return nil }
                if let rows, let inkBox, let ink = crop.pageBox(from: word.start, to: word.end, rows: rows, within: inkBox) {
                    onInk[box] = ink
                }
                return Word(text: word.text, box: box, confidence: 100 * word.confidence,
                            candidates: reading.line.candidates(of: word.range, count: candidates))
            }
            if !words.isEmpty { lines.append(Line(box: lineBox, words: words)) }
        }
        return (lines, onInk)
    }
}

extension PageResult {
    /// Moves each word whose box `onInk` knows onto its box there, and fits each line's box to its words: the
    /// layout and reading order stay as they were.
    mutating func placeOnInk(_ onInk: [Rect: Rect]) {
        guard !onInk.isEmpty else { return }
        for b in blocks.indices {
            for p in blocks[b].paragraphs.indices {
                for l in blocks[b].paragraphs[p].lines.indices {
                    var line = blocks[b].paragraphs[p].lines[l]
                    for w in line.words.indices { line.words[w].box = onInk[line.words[w].box] ?? line.words[w].box }
                    line.box = Rect.enclosing(line.words.map(\.box), or: line.box)
                    blocks[b].paragraphs[p].lines[l] = line
                }
            }
        }
    }
}
