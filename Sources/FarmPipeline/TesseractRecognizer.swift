import FarmCore
import Leptonica
import Tesseract

/// The real engine: Tesseract LSTM with languages in priority order.
public final class TesseractRecognizer: PageRecognizer {
    public static let stage = "recognize"
    private let engine: TesseractEngine
    public let engineName: String

    public init(languages: [String] = ["eng"], dataPath: String? = nil, candidates: Int = 0) throws(PageFailure) {
        do {
            engine = try TesseractEngine(EngineConfiguration(languages: languages, dataPath: dataPath))
        } catch {
            throw PageFailure(stage: Self.stage, code: .ocrFailed, message: error.message)
        }
        engine.candidateCount = candidates
        engineName = "tesseract \(TesseractEngine.version) \(languages.joined(separator: "+"))"
    }

    public func recognize(_ page: DecodedPage, pageNumber: Int, options: RecognitionOptions) throws(PageFailure) -> RecognizedPage {
        let start = Clock.monotonicNanoseconds
        let recognition: Recognition
        do {
            recognition = try engine.recognize(page.image,
                                               resolution: page.declaredResolution > 0 ? page.declaredResolution : nil,
                                               timeoutMilliseconds: options.timeoutMilliseconds,
                                               inputName: options.sourceName.isEmpty ? nil : options.sourceName)
        } catch {
            let code: FailureCode = error.kind == .timeout ? .timeout : .ocrFailed
            throw PageFailure(stage: Self.stage, code: code, message: error.message, retryable: error.kind == .timeout)
        }
        var timings = [StageTiming(stage: Self.stage, milliseconds: Clock.milliseconds(since: start))]
        var result = PageResult(recognition, resolution: page.declaredResolution)

        var renderings: [OutputFormat: [UInt8]] = [:]
        if !options.renderings.isEmpty {
            let renderStart = Clock.monotonicNanoseconds
            if options.renderings.contains(.hocr) { renderings[.hocr] = Array(engine.hocr(pageNumber: pageNumber).utf8) }
            if options.renderings.contains(.alto) { renderings[.alto] = Array(engine.alto(pageNumber: pageNumber).utf8) }
            if options.renderings.contains(.pdf) {
                do {
                    renderings[.pdf] = try engine.searchablePDF(title: options.sourceName,
                                                                fallbackResolution: page.declaredResolution > 0 ? nil : 300)
                } catch {
                    throw PageFailure(stage: "render", code: .ocrFailed, message: error.message)
                }
            }
            timings.append(StageTiming(stage: "render", milliseconds: Clock.milliseconds(since: renderStart)))
        }
        result.timings = timings
        return RecognizedPage(result: result, renderings: renderings)
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
                             language: word.language)
                    })
                })
            })
        }
        self.init(width: recognition.width, height: recognition.height, resolution: resolution,
                  text: recognition.text, meanConfidence: recognition.meanConfidence, blocks: blocks)
    }
}
