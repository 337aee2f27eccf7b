import CTesseract
import Leptonica
#if canImport(Glibc)
import Glibc
#endif

/// How Tesseract splits a page into text (its page segmentation modes).
public enum PageSegmentationMode: Int32, Sendable, CaseIterable {
    case orientationOnly = 0, autoWithOrientation, autoOnly, auto, singleColumn, singleBlockVertical, singleBlock,
        singleLine, singleWord, circleWord, singleCharacter, sparseText, sparseTextWithOrientation, rawLine

    var tesseract: TessPageSegMode { TessPageSegMode(rawValue: UInt32(rawValue)) }
}

/// What an engine is set up with. Variables that only take effect at initialization (e.g. `load_system_dawg`)
/// belong here rather than in `setVariable`.
public struct EngineConfiguration: Sendable, Equatable {
    /// Languages in priority order, e.g. ["chi_sim", "eng"].
    public var languages: [String]
    /// The tessdata folder; nil uses `TESSDATA_PREFIX` or the system default.
    public var dataPath: String?
    public var pageSegmentationMode: PageSegmentationMode
    /// Tesseract variables (name, value), applied in order at initialization.
    public var variables: [String: String]

    public init(languages: [String] = ["eng"], dataPath: String? = nil,
                pageSegmentationMode: PageSegmentationMode = .auto, variables: [String: String] = [:]) {
        self.languages = languages
        self.dataPath = dataPath
        self.pageSegmentationMode = pageSegmentationMode
        self.variables = variables
    }

    /// The language string Tesseract takes: "chi_sim+eng".
    public var languageString: String { languages.joined(separator: "+") }
}

/// A Tesseract engine: created once (loading its models takes ~0.1 s) and reused for page after page.
/// Owns one `TessBaseAPI*`, ended and deleted in `deinit`. Not `Sendable` and not re-entrant: one engine per
/// page slot, used only on that slot's thread.
public final class TesseractEngine {
    private let handle: OpaquePointer
    public let configuration: EngineConfiguration
    /// Alternative readings per word to collect (0: none, which is faster).
    public var candidateCount: Int = 0 {
        didSet {
            TessBaseAPISetVariable(handle, "lstm_choice_mode", candidateCount > 0 ? "2" : "0")
        }
    }

    public init(_ configuration: EngineConfiguration = EngineConfiguration()) throws(TesseractError) {
        LeptonicaLibrary.prepare()
        // Tesseract parses numbers with the C locale; the process never leaves it.
        setlocale(LC_NUMERIC, "C")
        guard let handle = TessBaseAPICreate() else {
            throw TesseractError(.initialization, "cannot create a Tesseract engine")
        }
        TesseractGlobals.configure()
        let names = configuration.variables.keys.sorted()
        let values = names.map { configuration.variables[$0]! }
        let rc = withCStrings(names) { namePointers in
            withCStrings(values) { valuePointers in
                TessBaseAPIInit4(handle, configuration.dataPath, configuration.languageString, OEM_LSTM_ONLY,
                                 nil, 0, namePointers, valuePointers, names.count, 0)
            }
        }
        // Checked before `self` is complete: a throw after that would run deinit and free the handle twice.
        guard rc == 0 else {
            TessBaseAPIDelete(handle)
            let path = configuration.dataPath ?? TesseractEngine.defaultDataPath
            throw TesseractError(.initialization,
                                 "cannot load language data '\(configuration.languageString)' from \(path); "
                                 + "installed: \(TesseractEngine.availableLanguages(dataPath: configuration.dataPath).joined(separator: ", "))")
        }
        self.handle = handle
        self.configuration = configuration
        TessBaseAPISetPageSegMode(handle, configuration.pageSegmentationMode.tesseract)
    }

    deinit {
        TessBaseAPIEnd(handle)
        TessBaseAPIDelete(handle)
    }

    /// Sets a Tesseract variable for the following pages; false when Tesseract has no such variable.
    @discardableResult
    public func setVariable(_ name: String, _ value: String) -> Bool {
        TessBaseAPISetVariable(handle, name, value) != 0
    }

    public func stringVariable(_ name: String) -> String? {
        TessBaseAPIGetStringVariable(handle, name).map { String(cString: $0) }
    }

    public var pageSegmentationMode: PageSegmentationMode {
        get { PageSegmentationMode(rawValue: Int32(TessBaseAPIGetPageSegMode(handle).rawValue)) ?? .auto }
        set { TessBaseAPISetPageSegMode(handle, newValue.tesseract) }
    }

    /// The languages actually loaded, in priority order.
    public var loadedLanguages: [String] {
        guard let text = TessBaseAPIGetInitLanguagesAsString(handle) else { return [] }
        return String(cString: text).split(separator: "+").map(String.init)
    }

    // MARK: Recognition

    /// Recognizes `image` (any depth). `resolution` overrides the image's ppi tag (Tesseract assumes 70 when both
    /// are missing, which hurts). `timeoutMilliseconds` stops a page that runs too long with `.timeout`.
    /// `inputName` names the image to Tesseract: never the path of a file people can write beside, since Tesseract
    /// then reads `NAME.uzn` next to it as the page's zones (in any mode up to single block), and zones that leave
    /// the image abort the process. Without a resolution, Tesseract estimates one from the text size, as its
    /// command line does.
    public func recognize(_ image: Leptonica.Pix, resolution: Int? = nil, timeoutMilliseconds: Int? = nil,
                          inputName: String? = nil) throws(TesseractError) -> Recognition
    {
        TessBaseAPISetInputName(handle, inputName)
        TessBaseAPISetImage2(handle, image.pointer)
        if let resolution, resolution > 0 { TessBaseAPISetSourceResolution(handle, Int32(resolution)) }

        var rc: Int32
        var timedOut = false
        if let timeoutMilliseconds {
            let monitor = TessMonitorCreate()
            defer { TessMonitorDelete(monitor) }
            TessMonitorSetDeadlineMSecs(monitor, Int32(clamping: max(timeoutMilliseconds, 1)))
            let start = monotonicMilliseconds()
            rc = TessBaseAPIRecognize(handle, monitor)
            timedOut = monotonicMilliseconds() - start >= timeoutMilliseconds
        } else {
            rc = TessBaseAPIRecognize(handle, nil)
        }
        _ = LeptonicaLibrary.takeMessages()
        if timedOut {
            TessBaseAPIClear(handle)
            throw TesseractError(.timeout, "recognition stopped after the page's time limit of \(timeoutMilliseconds ?? 0) ms")
        }
        guard rc == 0 else {
            TessBaseAPIClear(handle)
            throw TesseractError(.recognition, "Tesseract could not recognize the image (\(image.width)x\(image.height), \(image.depth) bpp)")
        }
        return collect(width: image.width, height: image.height)
    }

    /// The narrowest region `recognize(_:regions:mode:resolution:)` reads, in pixels on each side.
    public static let smallestRegion = 4

    /// Recognizes several parts of one image (e.g. the lines of a page in another language), setting the image
    /// once: Tesseract copies and thresholds an image each time it is set. Nil for a part it could not read.
    public func recognize(_ image: Leptonica.Pix, regions: [Leptonica.Box], mode: PageSegmentationMode,
                          resolution: Int? = nil) -> [Recognition?]
    {
        recognize(image, regions: regions, modes: Array(repeating: mode, count: regions.count), resolution: resolution)
    }

    /// `recognize(_:regions:mode:resolution:)` with a mode for each region (`modes[i]` for `regions[i]`), read in
    /// the order given.
    public func recognize(_ image: Leptonica.Pix, regions: [Leptonica.Box], modes: [PageSegmentationMode],
                          resolution: Int? = nil) -> [Recognition?]
    {
        precondition(modes.count == regions.count, "one mode for each region")
        guard !regions.isEmpty else { return [] }
        let previous = pageSegmentationMode
        defer { pageSegmentationMode = previous }
        TessBaseAPISetImage2(handle, image.pointer)
        if let resolution, resolution > 0 { TessBaseAPISetSourceResolution(handle, Int32(resolution)) }
        var results: [Recognition?] = []
        for (box, mode) in zip(regions, modes) {
            if mode != pageSegmentationMode { pageSegmentationMode = mode }
            // Tesseract aborts the process (block_edges' assertion) on a rectangle that leaves the image or is too
            // thin to hold an edge: only the part inside the image is read, and a sliver is not read at all.
            let x = max(0, box.x), y = max(0, box.y)
            let width = min(box.x + box.width, image.width) - x, height = min(box.y + box.height, image.height) - y
            guard width >= Self.smallestRegion, height >= Self.smallestRegion else {
                results.append(nil)
                continue
            }
            TessBaseAPISetRectangle(handle, Int32(x), Int32(y), Int32(width), Int32(height))
            let rc = TessBaseAPIRecognize(handle, nil)
            _ = LeptonicaLibrary.takeMessages()
            results.append(rc == 0 ? collect(width: image.width, height: image.height) : nil)
        }
        return results
    }

    /// Frees what the engine keeps of the last page (its copy of the image, the thresholded image, the layout):
    /// a slot between pages then holds only the models. The page's text is gone with it.
    public func releasePage() {
        TessBaseAPIClear(handle)
    }

    /// The text of the last recognized page.
    public func text() -> String { takeText(TessBaseAPIGetUTF8Text(handle)) }

    public func meanConfidence() -> Int { Int(TessBaseAPIMeanTextConf(handle)) }

    // MARK: Result collection

    private func collect(width: Int, height: Int) -> Recognition {
        guard let iterator = TessBaseAPIGetIterator(handle) else {
            return Recognition(width: width, height: height, blocks: [], text: "", meanConfidence: 0)
        }
        defer { TessResultIteratorDelete(iterator) }
        let page = TessResultIteratorGetPageIterator(iterator)

        var blocks: [RecognizedBlock] = []
        var paragraphs: [RecognizedParagraph] = []
        var lines: [RecognizedLine] = []
        var words: [RecognizedWord] = []
        var blockInfo: (Leptonica.Box, BlockKind)?
        var paragraphBox: Leptonica.Box?
        var lineInfo: (Leptonica.Box, (Int, Int, Int, Int)?)?

        func closeLine() {
            if let (box, baseline) = lineInfo, !words.isEmpty {
                lines.append(RecognizedLine(box: box, baseline: baseline.map { (x1: $0.0, y1: $0.1, x2: $0.2, y2: $0.3) }, words: words))
            }
            words = []
            lineInfo = nil
        }
        func closeParagraph() {
            closeLine()
            if let box = paragraphBox, !lines.isEmpty { paragraphs.append(RecognizedParagraph(box: box, lines: lines)) }
            lines = []
            paragraphBox = nil
        }
        func closeBlock() {
            closeParagraph()
            if let (box, kind) = blockInfo, !paragraphs.isEmpty {
                blocks.append(RecognizedBlock(box: box, kind: kind, paragraphs: paragraphs))
            }
            paragraphs = []
            blockInfo = nil
        }

        // Element boundaries are found by comparing boxes: Tesseract's IsAtBeginningOf restarts the row from the
        // top of the page on every call, which made this loop quadratic (160 ms on a dense page, now ~25 ms).
        var confidenceSum = 0.0
        var wordCount = 0
        repeat {
            let blockBox = box(page, RIL_BLOCK)
            let paraBox = box(page, RIL_PARA)
            let lineBox = box(page, RIL_TEXTLINE)
            if blockInfo?.0 != blockBox {
                closeBlock()
                blockInfo = (blockBox, blockKind(TessPageIteratorBlockType(page)))
            }
            if paragraphBox != paraBox {
                closeParagraph()
                paragraphBox = paraBox
            }
            if lineInfo?.0 != lineBox {
                closeLine()
                var x1: Int32 = 0, y1: Int32 = 0, x2: Int32 = 0, y2: Int32 = 0
                let hasBaseline = TessPageIteratorBaseline(page, RIL_TEXTLINE, &x1, &y1, &x2, &y2) != 0
                lineInfo = (lineBox, hasBaseline ? (Int(x1), Int(y1), Int(x2), Int(y2)) : nil)
            }
            guard let wordText = TessResultIteratorGetUTF8Text(iterator, RIL_WORD) else { continue }
            let text = String(cString: wordText)
            TessDeleteText(wordText)
            if text.isEmpty { continue }
            let confidence = Double(TessResultIteratorConfidence(iterator, RIL_WORD))
            var bold: Int32 = 0, italic: Int32 = 0, underlined: Int32 = 0, monospace: Int32 = 0, serif: Int32 = 0
            var smallcaps: Int32 = 0, pointSize: Int32 = 0, fontID: Int32 = 0
            _ = TessResultIteratorWordFontAttributes(iterator, &bold, &italic, &underlined, &monospace, &serif,
                                                    &smallcaps, &pointSize, &fontID)
            let language = TessResultIteratorWordRecognitionLanguage(iterator).map { String(cString: $0) }
            let candidates = candidateCount > 0
                ? CandidateSearch.wordCandidates(symbolChoices(iterator), limit: candidateCount)
                : []
            words.append(RecognizedWord(
                text: text, box: box(page, RIL_WORD), confidence: confidence, candidates: candidates,
                isFromDictionary: TessResultIteratorWordIsFromDictionary(iterator) != 0,
                isNumeric: TessResultIteratorWordIsNumeric(iterator) != 0,
                language: language, isBold: bold != 0, isItalic: italic != 0, pointSize: Int(pointSize)))
            confidenceSum += confidence
            wordCount += 1
        } while TessResultIteratorNext(iterator, RIL_WORD) != 0
        closeBlock()

        return Recognition(width: width, height: height, blocks: blocks, text: Recognition.text(of: blocks),
                           meanConfidence: wordCount > 0 ? confidenceSum / Double(wordCount) : 0)
    }

    /// For each symbol of the current word, its alternative readings (best first).
    private func symbolChoices(_ iterator: OpaquePointer) -> [[Choice]] {
        guard let symbols = TessResultIteratorCopy(iterator) else { return [] }
        defer { TessResultIteratorDelete(symbols) }
        let page = TessResultIteratorGetPageIterator(symbols)
        var result: [[Choice]] = []
        while true {
            var choices: [Choice] = []
            if let choice = TessResultIteratorGetChoiceIterator(symbols) {
                repeat {
                    if let text = TessChoiceIteratorGetUTF8Text(choice) {
                        choices.append(Choice(text: String(cString: text), confidence: Double(TessChoiceIteratorConfidence(choice))))
                    }
                } while TessChoiceIteratorNext(choice) != 0
                TessChoiceIteratorDelete(choice)
            }
            choices.sort { $0.confidence > $1.confidence }
            result.append(choices)
            if TessPageIteratorIsAtFinalElement(page, RIL_WORD, RIL_SYMBOL) != 0 { break }
            if TessResultIteratorNext(symbols, RIL_SYMBOL) == 0 { break }
        }
        return result
    }

    private func box(_ page: OpaquePointer?, _ level: TessPageIteratorLevel) -> Leptonica.Box {
        var left: Int32 = 0, top: Int32 = 0, right: Int32 = 0, bottom: Int32 = 0
        TessPageIteratorBoundingBox(page, level, &left, &top, &right, &bottom)
        return Leptonica.Box(x: Int(left), y: Int(top), width: Int(right - left), height: Int(bottom - top))
    }

    private func blockKind(_ type: TessPolyBlockType) -> BlockKind {
        switch type {
        case PT_FLOWING_TEXT: .text
        case PT_HEADING_TEXT: .heading
        case PT_PULLOUT_TEXT: .pullout
        case PT_EQUATION, PT_INLINE_EQUATION: .equation
        case PT_TABLE: .table
        case PT_VERTICAL_TEXT: .verticalText
        case PT_CAPTION_TEXT: .caption
        case PT_FLOWING_IMAGE, PT_HEADING_IMAGE, PT_PULLOUT_IMAGE: .image
        case PT_HORZ_LINE, PT_VERT_LINE: .line
        case PT_NOISE: .noise
        default: .unknown
        }
    }

    private func takeText(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        defer { TessDeleteText(pointer) }
        return String(cString: pointer)
    }

    // MARK: Facts

    /// The folder Tesseract reads language data from when none is given.
    public static var defaultDataPath: String {
        if let prefix = getenv("TESSDATA_PREFIX") { return String(cString: prefix) }
        return "/usr/share/tesseract-ocr/5/tessdata"
    }

    /// Languages installed in `dataPath` (or the default), sorted; "osd" is left out.
    public static func availableLanguages(dataPath: String? = nil) -> [String] {
        let path = dataPath ?? defaultDataPath
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            // Read in place up to the NUL: a record is only as long as its name, so copying the whole 256-byte
            // `d_name` field can read past the end of readdir's buffer.
            let field = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let name = String(decoding: UnsafeRawBufferPointer(start: field, count: strlen(field.assumingMemoryBound(to: CChar.self))),
                              as: UTF8.self)
            if name.hasSuffix(".traineddata") {
                let language = String(name.dropLast(".traineddata".count))
                if language != "osd" { names.append(language) }
            }
        }
        return names.sorted()
    }

    /// Whether the orientation-and-script model is installed.
    public static func hasOrientationData(dataPath: String? = nil) -> Bool {
        access((dataPath ?? defaultDataPath) + "/osd.traineddata", R_OK) == 0
    }

    public static var version: String { String(cString: TessVersion()) }
}

/// Process-wide Tesseract settings. Some Tesseract variables (`debug_file` among them) are globals shared by every
/// engine, so they are set once here rather than per engine, where concurrent initializations would race on them.
enum TesseractGlobals {
    private static let configured: Void = {
        guard let api = TessBaseAPICreate() else { return }
        // Tesseract's own chatter ("Estimating resolution as …") goes to its debug file, not to stderr.
        TessBaseAPISetVariable(api, "debug_file", "/dev/null")
        TessBaseAPIDelete(api)
    }()

    static func configure() { configured }
}

func withCStrings<R>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    return pointers.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
}

func monotonicMilliseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int(now.tv_sec) * 1000 + Int(now.tv_nsec) / 1_000_000
}

