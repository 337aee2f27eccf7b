import FarmCore
import Leptonica
import ONNXRuntime

/// The neural reading engine: PP-OCRv6-small's text detector, line classifier and recognizer run by ONNX Runtime.
/// Lines are found, cut out upright, read, split into words with boxes on the page, and laid out by ocrfarm's
/// reading order. Owns the runtime and its three sessions, made once and released with it; one recognizer per
/// page slot, used on that slot's thread only (ONNX Runtime gets one intra-op and one inter-op thread).
public final class NeuralRecognizer: PageRecognizer {
    public static let stage = "recognize"
    public let engineName: String
    /// The runtime stays loaded as long as a session made from it lives.
    let runtime: ONNXRuntime
    let detector: TextDetector
    let classifier: LineClassifier
    let recognizer: TextRecognizer

    /// The reference pipeline's `text_score`: a line read with a lower mean character probability is dropped.
    static let minimumLineConfidence = 0.5

    /// Loads the runtime and the three models; a failure names the file.
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
        engineName = NeuralModels.engineName(runtimeVersion: runtime.version)
    }

    public func recognize(_ page: DecodedPage, options: RecognitionOptions) throws(PageFailure) -> PageResult {
        let start = Clock.monotonicNanoseconds
        let width = page.image.width, height = page.image.height
        let image: NeuralImage
        do throws(LeptonicaError) {
            image = try NeuralImage(page.image)
        } catch {
            throw PageFailure(stage: Self.stage, code: .internalError, message: "neural engine: cannot read the page's pixels: \(error.description)")
        }
        /// Stops the page once its time limit is spent; run before each model run.
        func checkTime() throws(PageFailure) {
            guard let limit = options.timeoutMilliseconds, Int(Clock.milliseconds(since: start)) >= limit else { return }
            throw PageFailure(stage: Self.stage, code: .timeout,
                              message: "recognition stopped after the page's time limit of \(limit) ms", retryable: true)
        }
        func rethrow(_ error: ModelRunError<PageFailure>) -> PageFailure {
            switch error {
            case .stopped(let failure): return failure
            case .runtime(let error): return PageFailure(stage: Self.stage, code: .ocrFailed, message: error.description)
            }
        }

        try checkTime()
        // Where the page's time goes, for its findings: detection, cropping and classifying, reading.
        var lap = Clock.monotonicNanoseconds
        var spent: [(String, JSON)] = []
        func record(_ name: String) {
            spent.append((name, .rounded(Clock.milliseconds(since: lap), places: 1)))
            lap = Clock.monotonicNanoseconds
        }
        var regions: [TextRegion]
        // The body text's size sets the detector's input size (large print is found on a smaller input).
        let textSize = (try? TextSize.estimate(page.image)) ?? nil
        let plan = detector.inputPlan(width: width, height: height, xHeight: textSize?.xHeight)
        do { regions = try detector.regions(of: image, plan: plan) } catch {
            throw PageFailure(stage: Self.stage, code: .ocrFailed, message: error.description)
        }
        if let fraction = options.minTextHeight {
            // A line's height is its region's short side.
            regions.removeAll { region in
                let c = region.corners
                return min(c[0].distance(to: c[3]), c[0].distance(to: c[1])) < fraction * Double(height)
            }
        }
        var crops = regions.compactMap { LineCrop($0, of: image) }
        let turned: [Bool]
        record("detect_ms")
        do { turned = try classifier.upsideDown(crops.map(\.image), checkTime: checkTime) } catch { throw rethrow(error) }
        record("crop_classify_ms")
        // The classifier sees a line squeezed into 192 pixels and calls some long upright lines of clean print upside
        // down (5 of 26 lines of a synthetic clean page): a line it turns is read both ways, and the surer reading kept.
        let doubted = crops.indices.filter { turned[$0] }
        let halfTurned = doubted.map { index in
            var crop = crops[index]
            crop.turnHalf()
            return crop
        }
        var readings: [TextRecognizer.Reading]
        do { readings = try recognizer.read((crops + halfTurned).map(\.image), checkTime: checkTime) } catch { throw rethrow(error) }
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
        record("read_ms")

        let pageBounds = Rect(x: 0, y: 0, width: width, height: height)
        var lines: [Line] = []
        // Each word's box on its line's ink (`LineCrop.inkRows`), by its box on the detector's region. The layout
        // groups rows and columns on the regions (as the reference pipeline does: on boxes trimmed to the ink, the
        // table crops' rows joined worse, pubtabnet CER 11.9% -> 14.9%), and the documents get the ink's boxes.
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
                            candidates: reading.line.candidates(of: word.range, count: options.candidates))
            }
            if !words.isEmpty { lines.append(Line(box: lineBox, words: words)) }
        }

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
            ("engine", JSON(engineName)), ("regions", JSON(regions.count)), ("lines", JSON(lines.count)),
            ("turned", JSON(turnedCount)), ("doubted", JSON(doubted.count)),
            ("x_height", textSize.map { .rounded($0.xHeight, places: 1) } ?? .null),
            ("detector_input", .array([JSON(plan.inputWidth), JSON(plan.inputHeight)])),
        ] + spent))])
        result.timings = [StageTiming(stage: Self.stage, milliseconds: Clock.milliseconds(since: start))]
        result.engine = engineName
        return result
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
