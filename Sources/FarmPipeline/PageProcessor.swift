import FarmAnalysis
import FarmCore
import FarmRender
import FarmRuntime
import Leptonica
import QPDF
import Tesseract

/// Where a page's bytes come from.
public enum PageSource: Sendable {
    /// Image file bytes; `index` picks the page of a multi-page TIFF.
    case image([UInt8], index: Int)
    /// PDF bytes; `index` picks the page to rasterize.
    case pdf([UInt8], index: Int)
}

extension PageSource {
    /// The page of the file the source is, from 0.
    var index: Int {
        switch self {
        case .image(_, let index), .pdf(_, let index): index
        }
    }
}

/// A page read, and the one-page documents asked for (`PageProcessor.process(_:options:outputs:sourceName:)`).
public struct RecognizedPage: Sendable {
    public var result: PageResult
    /// Complete one-page documents, in the order they were asked for.
    public var renderings: [(format: OutputFormat, bytes: [UInt8])]

    public init(result: PageResult, renderings: [(format: OutputFormat, bytes: [UInt8])] = []) {
        self.result = result
        self.renderings = renderings
    }

    /// The document in `format`, if it was rendered.
    public func rendering(_ format: OutputFormat) -> [UInt8]? { renderings.first { $0.format == format }?.bytes }
}

/// Whether a slot reads pages.
public enum EngineKind: String, Sendable, CaseIterable {
    /// Each page is read by the engine its options name (`PageOptions.engine`, `Engines`).
    case page
    /// Returns an empty result at once, without decoding: for measuring everything around OCR.
    case none
}

/// Runs the page pipeline for one slot: decode (or rasterize), the seeing stages, and recognition, with one
/// engine per language set created on first use and kept. Not `Sendable`: one processor per slot thread.
public final class PageProcessor {
    public let engine: EngineKind
    /// Settable so a page process can fit the budget to its memory limits once its engine is loaded.
    public var limits: DecodeLimits
    /// When set, every page runs these stages whatever its options say (tests, `--raw`).
    public let pipelineOverride: PipelineOptions?
    /// With the `none` engine, whether pages are still decoded and corrected (true for `ocr`, to measure the
    /// stages; false for the farm's workers, which measure the farm itself).
    public var decodesWithoutEngine = true
    private let makeRecognizer: (RecognizerKey) throws(PageFailure) -> any PageRecognizer
    private var recognizers: [RecognizerKey: any PageRecognizer] = [:]
    private var recognizerOrder: [RecognizerKey] = []
    private var pipelines: [PipelineOptions: PagePipeline] = [:]
    /// One OSD engine for all of this slot's pipelines, made when a page first needs it.
    private let orientationDetector = LazyOrientationDetector()
    /// Engines kept per slot; a page in another language set replaces the least recently used one.
    private let maxEngines = 2
    /// The page's language and keywords from its text, made on first use; nil for the `none` engine (no text), and
    /// should ICU fail to open its word rules (the page then goes without them rather than failing).
    private lazy var analyzer: PageAnalyzer? = engine == .none ? nil : try? PageAnalyzer()

    /// `engines` makes a page's recognizer from the engine its options name (`Engines.standard`: Tesseract, the
    /// neural engine, and the automatic choice between them).
    public init(engine: EngineKind, limits: DecodeLimits = DecodeLimits(), pipeline: PipelineOptions? = nil,
                engines: Engines = .standard)
    {
        self.engine = engine
        self.limits = limits
        self.pipelineOverride = pipeline
        makeRecognizer = { key throws(PageFailure) -> any PageRecognizer in
            if engine == .none { return NullRecognizer() }
            return try engines.make(key.engine, key.request)
        }
    }

    /// Creates the engine for `languages` now (so a worker fails at start, not at its first page); with `auto`
    /// the engines are made as pages need them.
    public func prepare(languages: [String], engine readingEngine: ReadingEngine = .defaultChoice) throws(PageFailure) {
        if languages != [PageOptions.automaticLanguage] {
            _ = try recognizer(for: RecognizerKey(engine: readingEngine, request: EngineRequest(languages: languages)))
        }
        _ = seeingStages(pipelineOverride ?? PipelineOptions())
    }

    /// The engine of the recognizer used last, for logs ("none" for the null engine).
    public var engineName: String {
        engine == .none ? "none" : recognizerOrder.last.flatMap { recognizers[$0]?.engineName } ?? "tesseract"
    }

    /// The creator the documents of a page read by Tesseract name (a page's own is `DocumentCreator(engine:)` of its
    /// result's `engine`).
    public static var documentCreator: DocumentCreator { DocumentCreator(engine: TesseractRecognizer.version) }

    /// The creator the documents of `result` name: ocrfarm's version with the engine that read the page.
    public static func documentCreator(of result: PageResult) -> DocumentCreator {
        result.engine.map(DocumentCreator.init(engine:)) ?? documentCreator
    }

    /// Decodes, corrects and recognizes one page, and renders it as each of `outputs` (`PageArtifacts`; the PDF
    /// page from the kept page image); every failure is a `PageFailure`, never a crash. `sourceName` names the page
    /// to the engine and in the documents.
    public func process(_ source: consuming PageSource, options: PageOptions, outputs: [OutputFormat] = [],
                        sourceName: String = "") throws(PageFailure) -> RecognizedPage
    {
        if engine == .none && !decodesWithoutEngine {
            return RecognizedPage(result: .empty(width: 0, height: 0, resolution: 0))
        }
        // Nothing was read by the null engine, so there is nothing to render.
        let outputs = engine == .none ? [] : outputs
        let start = Clock.monotonicNanoseconds
        let pageNumber = source.index + 1
        // The file, kept for the PDF page's image (its own bytes or pixels; a reference, not a copy).
        var file: [UInt8]?
        if outputs.contains(where: \.needsPageImage), case .image(let bytes, _) = source { file = bytes }
        // A PDF page with text of its own is kept as it is (`--pdf-text skip`): its text is its result.
        if case .pdf(let bytes, let index) = source, options.pdfText == .skip, engine != .none {
            if let existing = try PDFRasterizer.existingText(bytes, page: index) {
                return try Self.keptPage(bytes, index: index, existing: existing, outputs: outputs, sourceName: sourceName,
                                         languages: options.languages, analyzer: analyzer, start: start)
            }
        }
        // A PDF's page keeps its own content: its PDF rendering is the page with the text laid over it.
        var sourcePDF: [UInt8]?
        if case .pdf(let bytes, _) = source, outputs.contains(.pdf) { sourcePDF = bytes }
        var decoded = try Self.decode(source, limits: limits, keepColor: options.imageMode == .color)
        // --image-dpi stands for what the file says: the stages scale it with the page, as they do a declared one.
        if let dpi = options.imageDPI { decoded.declaredResolution = dpi }
        let fileResolution = decoded.declaredResolution
        let decodeTime = StageTiming(stage: Decoder.stage, milliseconds: Clock.milliseconds(since: start))
        let (format, exifOrientation) = (decoded.format, decoded.exifOrientation)
        let requestedLanguages = options.languages
        var options = options
        var languageFinding: JSON?
        if options.automaticLanguages {
            (options.languages, languageFinding) = try chooseLanguages(decoded, options: options)
        }
        let recognizer = try recognizer(for: RecognizerKey(engine: options.engine, request: EngineRequest(
            languages: options.languages, languageCorrection: options.languageCorrection)))
        let pipeline = seeingStages(pipelineOverride ?? PipelineOptions(options).leavingOut(recognizer.stagesLeftOut))
        // A weak page is read again as decoded, and a table's cells are read from the file's own pixels (at every
        // level, with or without the second reading), so the image is kept whenever the engine reads it (Tesseract)
        // and the stages may change the page: a color image as 8-bit gray (what Tesseract reads of it anyway, a
        // quarter of the memory), any other as it is (a reference, no copy).
        let keepsUncorrected = recognizer.readsUncorrectedImage && !pipeline.stages.isEmpty
        let uncorrected = !keepsUncorrected ? nil : decoded.image.depth == 32 ? try? decoded.image.luminance() : decoded.image
        // The decoded image goes to the stages, which let go of each image once the next exists.
        let (image, seen) = try pipeline.run(consume decoded, languages: options.languages,
                                             keepingBefore: recognizer.stagesMaybeLeftOut)
        var context = seen
        if let languageFinding { context.record("language", languageFinding) }
        var corrected = DecodedPage(image: image, format: format, declaredResolution: context.resolution,
                                    exifOrientation: exifOrientation)
        if let uncorrected { corrected.uncorrected = UncorrectedImage(image: uncorrected, toPage: context.toPage) }
        corrected.lessCorrected = context.lessCorrected
        // The scale stage's measure is the kept page's (before scaling); the scaled page's would be another.
        if corrected.lessCorrected != nil { corrected.measuredTextSize = context.unscaledTextSize }
        context.lessCorrected = nil
        var result = try recognizer.recognize(corrected, options: RecognitionOptions(
            timeoutMilliseconds: options.timeoutMilliseconds, sourceName: sourceName,
            candidates: options.candidates, words: options.words, minTextHeight: options.minTextHeight,
            level: options.level, languageCorrection: options.languageCorrection, secondReading: options.secondReading))
        if result.engine == nil && engine != .none { result.engine = recognizer.engineVersion }
        // The PDF page is rendered from the result as read (boxes on the recognized page, mapped onto the picture
        // shown; `pdfPicture`), and timed as a stage of its own.
        var pdf: [UInt8]?
        if outputs.contains(.pdf) && sourcePDF == nil {
            pdf = try renderedPDF(result: &result, image: image, declaredResolution: corrected.declaredResolution,
                                  fileResolution: fileResolution, file: file, pageNumber: pageNumber,
                                  exifOrientation: exifOrientation, context: &context, options: options, sourceName: sourceName)
        }
        result.timings = [decodeTime] + context.timings + result.timings
        // The stages' findings, then the recognizer's (the accurate level's readings).
        if case .object(let recognized) = result.findings { context.findings += recognized }
        if let sourcePDF, let restricted = Self.restrictionFinding(sourcePDF) { context.record("pdf_restrictions", restricted) }
        if sourcePDF != nil, options.pdfImage == .corrected {
            // `ocr` refuses the option for PDF input; a farm's document may mix PDFs and photos, so it is said here.
            context.record("pdf_image", .object([("image", "original"), ("why", JSON(
                "--pdf-image corrected does not apply to a PDF's page: it keeps its own content, turned upright by /Rotate"))]))
        }
        // A script OSD saw that no installed language reads: named with the package that would (issue 36), unless
        // the page reads as text in its language after all (judged by Tesseract's dictionary: not on a page only the
        // neural engine read).
        if engine != .none, MissingLanguage.readsAsLanguage(result, findings: context.findings) == false,
           let missing = MissingLanguage.finding(in: context.findings, languages: options.languages,
                                                 installed: TesseractInfo.installedLanguages) {
            context.record(MissingLanguage.findingName, missing)
        }
        result.findings = context.findingsJSON
        result.toOriginal = context.toPage == .identity ? nil : context.toOriginal
        result.originalWidth = context.originalWidth
        result.originalHeight = context.originalHeight
        if let sourcePDF {
            pdf = try Self.overlaid(sourcePDF, result: &result, pageNumber: pageNumber, options: options, sourceName: sourceName)
        }
        if engine != .none {
            Self.analyze(&result, with: analyzer, page: image, options: options)
        }
        let renderings = PageArtifacts.render(result, pdf: pdf, outputs: outputs, source: sourceName, pageNumber: pageNumber,
                                              languages: requestedLanguages, created: Clock.now,
                                              creator: Self.documentCreator(of: result))
        return RecognizedPage(result: result, renderings: renderings)
    }

    /// The page's PDF rendered from the result as read (boxes on the recognized page, mapped onto the picture
    /// shown; `pdfPicture`), timed as a stage of its own; the resolution chosen and the picture are findings.
    private func renderedPDF(result: inout PageResult, image: Pix, declaredResolution: Int, fileResolution: Int,
                             file: [UInt8]?, pageNumber: Int, exifOrientation: Int, context: inout PageContext,
                             options: PageOptions, sourceName: String) throws(PageFailure) -> [UInt8] {
        let renderStart = Clock.monotonicNanoseconds
        // The page's size on paper: the file's resolution when it makes a paper-sized page, else inferred
        // from the page's shape and text (an A4 PNG without one is an A4 page, not 6.4 inches wide).
        // The recognized page's pixels per pixel of the file (the scale stage enlarges small print).
        let scale = 1 / PDFRendering.scale(of: context.toOriginal, width: image.width, height: image.height)
        let resolution = PageResolution.choose(width: image.width, height: image.height, declared: declaredResolution,
                                               lineHeights: result.lines.map(\.box.height),
                                               option: options.imageDPI.map { _ in declaredResolution },
                                               scale: scale)
        if resolution.source != .file {
            // In the file's pixels, as a scanner's setting is given, with the page's size it makes.
            var finding: [(String, JSON)] = [("dpi", .rounded(resolution.dpi / scale, places: 1)),
                                             ("source", JSON(resolution.source.rawValue)),
                                             ("page_cm", .array([.rounded(Double(image.width) / resolution.dpi * 2.54, places: 1),
                                                                 .rounded(Double(image.height) / resolution.dpi * 2.54, places: 1)]))]
            if let why = resolution.why { finding.append(("why", JSON(why))) }
            if let bound = resolution.bound { finding.append(("bound", JSON(bound))) }
            context.record("resolution", .object(finding))
        }
        let picture = try pdfPicture(file: file, index: pageNumber - 1, exifOrientation: exifOrientation, image: image,
                                     context: context, options: options, resolution: resolution.dpi,
                                     originalResolution: resolution.source == .file && fileResolution > 0 ? Double(fileResolution) : nil)
        context.record("pdf_image", .object([("image", JSON(picture.choice)), ("kept", JSON(picture.kept))]))
        let pdf = try PDFRendering.page(result, picture: picture, title: sourceName, type: options.pdfType)
        result.timings.append(StageTiming(stage: PDFRendering.stage, milliseconds: Clock.milliseconds(since: renderStart)))
        return pdf
    }

    /// A PDF's page with the result's text laid over its own content (PDF/A-2B when asked, its finding added),
    /// timed as a stage of its own.
    private static func overlaid(_ sourcePDF: [UInt8], result: inout PageResult, pageNumber: Int, options: PageOptions,
                                 sourceName: String) throws(PageFailure) -> [UInt8] {
        let renderStart = Clock.monotonicNanoseconds
        var pdf = try PDFTextOverlay.addingText(to: sourcePDF, name: sourceName, pages: [(pageNumber - 1, result)],
                                                onlyPage: pageNumber - 1, replacingEarlier: options.pdfText == .redo)
        if options.pdfType == .pdfa2b {
            let archived = try PDFTextOverlay.archived(pdf, title: sourceName)
            pdf = archived.pdf
            if case .object(var fields) = result.findings {
                fields.append(("pdf_a", archived.finding))
                result.findings = .object(fields)
            }
        }
        result.timings.append(StageTiming(stage: PDFTextOverlay.stage, milliseconds: Clock.milliseconds(since: renderStart)))
        return pdf
    }

    /// The picture the page's PDF shows (`PageOptions.pdfImage`; `resolution` is the recognized page's, `originalResolution`
    /// the file's when it declares a credible one): the file's own image, or the corrected page at the
    /// original's resolution; by default the original for a scan and the corrected page for a photo (a page that
    /// was rectified). A page that came from a PDF, or whose file cannot be kept (the error is in the findings),
    /// shows the processed page image as before.
    private func pdfPicture(file: [UInt8]?, index: Int, exifOrientation: Int, image: Pix, context: PageContext,
                            options: PageOptions, resolution: Double, originalResolution: Double?)
        throws(PageFailure) -> PDFRendering.Picture
    {
        let recognized = (width: image.width, height: image.height)
        let rectified = context.findings.contains { $0.0 == "rectify" && $0.1["applied"]?.boolValue == true }
        let choice = options.pdfImage ?? (rectified ? .corrected : .original)
        var problem: String?
        if let file {
            switch choice {
            case .original:
                do throws(LeptonicaError) {
                    return try PDFRendering.original(file, index: index, exifOrientation: exifOrientation,
                                                     original: (context.originalWidth, context.originalHeight),
                                                     toOriginal: context.toOriginal, recognized: recognized,
                                                     resolution: resolution, originalResolution: originalResolution,
                                                     maxPixels: limits.maxPixels)
                } catch {
                    problem = error.description
                }
            case .corrected:
                do {
                    let original = try Self.decode(.image(file, index: index), limits: limits, keepColor: options.imageMode == .color)
                    return try PDFRendering.corrected(original.image, mode: options.imageMode, toOriginal: context.toOriginal,
                                                      recognized: recognized, resolution: resolution,
                                                      originalResolution: originalResolution)
                } catch {
                    problem = "\(error)"
                }
            }
        }
        // The kept page image (the user's look) at the size of the one read, else the image read.
        var shown = image
        do throws(LeptonicaError) {
            if let kept = context.keptImage, kept !== image {
                shown = kept.width == image.width && kept.height == image.height ? kept
                    : try kept.scaled(toWidth: image.width, height: image.height)
            }
            let picture = try PDFRendering.processed(shown, recognized: recognized, resolution: resolution)
            guard let problem else { return picture }
            return PDFRendering.Picture(image: picture.image, placement: picture.placement, choice: picture.choice,
                                        kept: "re-encoded (the file's image could not be kept: \(problem))")
        } catch {
            throw PageFailure(stage: PDFRendering.stage, code: .internalError, message: error.description)
        }
    }

    /// A PDF page kept as it is, with the text it has (`--pdf-text skip`): not rendered, not read. Its size is in
    /// points (72 per inch), and its PDF rendering is the page itself.
    private static func keptPage(_ pdf: [UInt8], index: Int, existing: PageResult, outputs: [OutputFormat], sourceName: String,
                                 languages: [String], analyzer: PageAnalyzer?, start: UInt64) throws(PageFailure) -> RecognizedPage
    {
        var result = existing
        // Its language and keywords, as a read page's (issue 36: born-digital documents had none); its text is the
        // file's own, so no word is doubted for its confidence.
        if let analyzer { (result.language, result.keywords) = analyzer.analyze(result.text, languages: languages) }
        let words = result.lines.reduce(0) { $0 + $1.words.count }
        var findings: [(String, JSON)] = [("pdf_text", .object([("kept", true), ("characters", JSON(result.text.count)),
                                                                ("words", JSON(words))]))]
        if outputs.contains(.pdf), let restricted = restrictionFinding(pdf) { findings.append(("pdf_restrictions", restricted)) }
        result.findings = .object(findings)
        var page: [UInt8]?
        if outputs.contains(.pdf) {
            page = try PDFTextOverlay.addingText(to: pdf, name: sourceName, pages: [], onlyPage: index)
        }
        result.timings = [StageTiming(stage: PDFTextOverlay.keptStage, milliseconds: Clock.milliseconds(since: start))]
        let renderings = PageArtifacts.render(result, pdf: page, outputs: outputs, source: sourceName, pageNumber: index + 1,
                                              languages: languages, created: Clock.now, creator: documentCreator)
        return RecognizedPage(result: result, renderings: renderings)
    }

    /// For a PDF encrypted with an owner password alone (read without a password: its restrictions on printing,
    /// copying or changing), the finding that its page PDF is written without them (`QPDF.addingText` writes
    /// no encryption); nil for a PDF that is not encrypted.
    private static func restrictionFinding(_ pdf: [UInt8]) -> JSON? {
        guard (try? QPDF.info(bytes: pdf, name: "the PDF"))?.isEncrypted == true else { return nil }
        return .object([("removed", true), ("why", JSON("the PDF opens without a password (an owner password only); its page PDF is "
                         + "written without encryption or restrictions, as PDF/A requires"))])
    }

    /// The stage name of the language, keywords and quality figure in the page's timings.
    public static let analysisStage = "analyze"

    /// Sets the page's language and keywords from its recognized text, and its quality figure (`QualityFigure`) from
    /// the reading and `page`, the image that was read (none: not measured).
    private static func analyze(_ result: inout PageResult, with analyzer: PageAnalyzer?, page: Pix?, options: PageOptions) {
        let start = Clock.monotonicNanoseconds
        if let analyzer {
            var confidence: [String: Double] = [:]
            for word in result.lines.lazy.flatMap(\.words) {
                // The engine's word keeps its punctuation ("Software!"); the keyword is the word inside it.
                let inner = word.text.drop { !$0.isLetter && !$0.isNumber }.reversed().drop { !$0.isLetter && !$0.isNumber }.reversed()
                let key = Keywords.comparisonKey(String(inner))
                confidence[key] = max(confidence[key] ?? 0, word.confidence)
            }
            (result.language, result.keywords) = analyzer.analyze(result.text, languages: options.languages, confidence: confidence)
        }
        if let page {
            // Ink is counted on about two million pixels, sampled (not averaged) from the page, so a large page is not
            // copied whole; without the page's pixels (should they not convert) the ink part is left out.
            let pixels = Double(page.width * page.height)
            let sampled = pixels > QualityFigure.inkSamples ? (try? page.sampled(by: (QualityFigure.inkSamples / pixels).squareRoot())) : nil
            let gray = try? (sampled ?? page).grayPixels()
            result.quality = QualityFigure.measure(result, gray: gray.map { ($0.width, $0.height, $0.data) },
                                                   usesDictionary: options.languageCorrection
                                                       && !LanguagePlan(options.languages).isUnspaced
                                                       && TesseractRecognizer.flagsDictionaryWords(of: result))
        }
        result.timings.append(StageTiming(stage: analysisStage, milliseconds: Clock.milliseconds(since: start)))
    }

    /// `--lang auto`: the script OSD sees; when that is Latin, a band of the page is read with each other installed
    /// script's language, which is chosen if the band has confidently read lines in that script.
    private func chooseLanguages(_ page: DecodedPage, options: PageOptions) throws(PageFailure) -> ([String], JSON) {
        let installed = TesseractInfo.installedLanguages
        var (languages, finding) = AutomaticLanguage.choose(for: page.image, resolution: page.declaredResolution,
                                                            detector: orientationDetector, installed: installed)
        if languages.first.map(AutomaticLanguage.isLatin) ?? false,
           let band = try? page.image.cropped(to: AutomaticLanguage.probeBand(width: page.image.width, height: page.image.height))
        {
            var probed: [(String, JSON)] = []
            for probe in AutomaticLanguage.probes(installed: installed) {
                let reader = try recognizer(for: RecognizerKey(engine: .tesseract, request: EngineRequest(
                    languages: probe, languageCorrection: options.languageCorrection)))
                let read = try reader.recognize(DecodedPage(image: band, format: page.format, declaredResolution: page.declaredResolution),
                                                options: RecognitionOptions(timeoutMilliseconds: options.timeoutMilliseconds))
                let characters = AutomaticLanguage.confidentCharacters(outsideLatin: read)
                probed.append((probe.joined(separator: "+"), JSON(characters)))
                if characters >= AutomaticLanguage.probeEvidence {
                    languages = probe
                    break
                }
            }
            finding.append(("probes", .object(probed)))
        }
        finding.append(("chosen", JSON(languages.joined(separator: "+"))))
        return (languages, .object(finding))
    }

    /// The pipeline for a set of options, made on first use (with one OSD engine shared by all of them).
    private func seeingStages(_ options: PipelineOptions) -> PagePipeline {
        if let pipeline = pipelines[options] { return pipeline }
        let made = PagePipeline(options: options, orientationDetector: orientationDetector)
        pipelines[options] = made
        return made
    }

    /// Decodes (or rasterizes and decodes) a source; the encoded bytes are released when this returns.
    public static func decode(_ source: consuming PageSource, limits: DecodeLimits = DecodeLimits(), keepColor: Bool = true)
        throws(PageFailure) -> DecodedPage
    {
        switch consume source {
        case .image(let bytes, let index):
            return try Decoder.decode(bytes, page: index, limits: limits, keepColor: keepColor)
        case .pdf(let bytes, let index):
            // The rendering is made to fit the page's memory as well as the pixel limit: a PDF page can be rendered
            // smaller, where an image file can only be refused (the decoder's estimate for colour: 14 bytes a pixel).
            let pixels = min(limits.maxPixels, limits.pageMemory / PDFRasterizer.bytesPerPixel)
            let rendered = try PDFRasterizer.rasterize(bytes, page: index, maxPixels: pixels)
            var decoded = try Decoder.decode(rendered.image, limits: limits, keepColor: keepColor)
            // Boxes are in the rendering's pixels: its resolution is what maps them back to the page's points.
            decoded.declaredResolution = rendered.resolution
            decoded.drawingErrors = rendered.drawingErrors
            return decoded
        }
    }

    private func recognizer(for key: RecognizerKey) throws(PageFailure) -> any PageRecognizer {
        if let existing = recognizers[key] {
            recognizerOrder.removeAll { $0 == key }
            recognizerOrder.append(key)
            return existing
        }
        let made = try makeRecognizer(key)
        if recognizers.count >= maxEngines, let oldest = recognizerOrder.first {
            recognizers.removeValue(forKey: oldest)
            recognizerOrder.removeFirst()
        }
        recognizers[key] = made
        recognizerOrder.append(key)
        return made
    }
}

/// What an engine is made for: which engine, and the languages and word lists it reads with.
struct RecognizerKey: Hashable {
    let engine: ReadingEngine
    let request: EngineRequest
}
