/// The correction stages a page may leave out (`--skip`), in pipeline order; stored and sent by raw value.
public enum CorrectionStage: String, Sendable, CaseIterable {
    case segment, orient, deskew, dewarp, scale, enhance
}

/// The look of the page image kept for the PDF (the OCR sees whatever reads best); stored by raw value.
public enum ImageMode: String, Sendable, CaseIterable {
    /// Lighting flattened, colors kept.
    case color
    /// Lighting flattened, gray.
    case gray
    /// Black and white.
    case bw
}

/// What the PDFs are (`--pdf-type`); stored by raw value.
public enum PDFType: String, Sendable, CaseIterable {
    /// PDF/A-2B (ISO 19005-2, level B): XMP metadata matching /Info, an sRGB OutputIntent, a trailer /ID, every
    /// font embedded. What archives ask for; OCRmyPDF's default too.
    case pdfa2b = "pdfa-2b"
    /// A plain PDF: no XMP, no OutputIntent (a few KB smaller per page).
    case pdf
}

/// Which picture a page PDF shows under its text (`--pdf-image`); stored by raw value.
public enum PDFImageChoice: String, Sendable, CaseIterable {
    /// The file's own image at its own resolution, losslessly (JPEG and JPEG 2000 bytes as they are).
    case original
    /// The corrected page (rectified, turned upright, deskewed) at the original's resolution, in the page's look.
    case corrected
}

/// What becomes of a PDF page that has text already (`--pdf-text`); stored by raw value.
public enum PDFTextMode: String, Sendable, CaseIterable {
    /// The page is kept as it is, not read: its own text is its result.
    case skip
    /// The page is read, and a text layer ocrfarm added before is replaced (other text stays).
    case redo
    /// The page is read, and the text laid over whatever text it has.
    case force
}

/// The engine that reads a page (`--engine`); stored per document by raw value, carried in every JOB.
public enum ReadingEngine: String, Sendable, CaseIterable {
    /// Tesseract's LSTM with its language models and word lists, with ocrfarm's second reading.
    case tesseract
    /// PP-OCRv6 text detection and recognition run by ONNX Runtime (`Scripts/install-neural`).
    case neural
    /// Per page, the engine the page's evidence favours (`AutomaticEngine`).
    case auto

    /// The engine new work gets when its submitter names none (decision 0095): `auto`, which reads with Tesseract alone
    /// where the neural engine is not installed. Options without an engine (`PageOptions()`, or stored without an
    /// `engine` key) are `tesseract`.
    public static let defaultChoice = ReadingEngine.auto
}

/// How a page is to be read: chosen at submit, stored with the document, carried in every JOB.
public struct PageOptions: Sendable, Equatable {
    /// Languages in priority order.
    public var languages: [String]
    /// Stop recognizing after this many milliseconds (nil: no limit).
    public var timeoutMilliseconds: Int?
    /// The look of the page image kept for the PDF.
    public var imageMode: ImageMode
    /// Correction stages left out, in pipeline order.
    public var skippedStages: [CorrectionStage]
    /// Alternative readings to keep per word, with their confidences (0: none).
    public var candidates: Int
    /// Words the page may contain that no dictionary knows (names, terms, codes): near misses are read as them.
    public var words: [String]
    /// Text smaller than this fraction of the page's height is ignored (nil: all text is read).
    public var minTextHeight: Double?
    /// One reading per page, or three (two text sizes, two binarizations) with the surest reading of each line kept.
    public var level: RecognitionLevel
    /// Whether language knowledge may change what the engine read: Tesseract's word lists in its beam search,
    /// custom words, and Chinese punctuation. Off: the characters as the network saw them (codes, serial numbers).
    public var languageCorrection: Bool
    /// Renderings the farm stores with each result as made at OCR time (of `OutputFormat.storable`; the text and
    /// the page's model are always stored, and hOCR, ALTO, PAGE and JSON not listed here are rendered from the model
    /// when exported or served). Default: the PDF page (`defaultOutputs`), which shows the page image.
    public var outputs: [OutputFormat]
    /// At either level, a page whose reading looks weak is read again with other variants and each line keeps its surest
    /// reading (off: `--no-second-reading`, to measure it or to save its time).
    public var secondReading: Bool = true
    /// The scans' resolution in pixels per inch, for files that do not say it or say it wrong (`--image-dpi`); nil:
    /// the file's, else inferred from the page (`PageResolution`). It sets the PDF page's size.
    public var imageDPI: Int?
    /// What the page PDFs are (`--pdf-type`).
    public var pdfType: PDFType = .pdfa2b
    /// The picture the page PDFs show (`--pdf-image`); nil: the original for a scan, the corrected page for a photo
    /// (a page that was rectified), as Apple's and other phone scanners keep it.
    public var pdfImage: PDFImageChoice?
    /// What becomes of a PDF page that has text already (`--pdf-text`).
    public var pdfText: PDFTextMode = .skip
    /// The engine that reads the page (`--engine`). `tesseract` here, as in options stored without one; what new work
    /// gets when its submitter names none is `ReadingEngine.defaultChoice`, which the front doors (the commands'
    /// `--engine`, uploads, a worker's start engine) apply.
    public var engine: ReadingEngine = .tesseract

    /// The renderings stored unless `--outputs` says otherwise: the PDF page only, the one a page's model cannot
    /// give back (it shows the page image).
    public static let defaultOutputs: [OutputFormat] = [.pdf]

    /// The resolutions `--image-dpi` takes.
    public static let imageDPIRange = 50...2400

    /// `--lang auto`: the languages are chosen per page from the script the page is written in.
    public static let automaticLanguage = "auto"

    /// The most alternatives a word can carry.
    public static let maximumCandidates = 10
    /// The most custom words a page's options carry (they travel in every JOB).
    public static let maximumWords = 10_000

    public init(languages: [String] = ["eng"], timeoutMilliseconds: Int? = nil, imageMode: ImageMode = .gray,
                skippedStages: [CorrectionStage] = [], candidates: Int = 0, words: [String] = [], minTextHeight: Double? = nil,
                level: RecognitionLevel = .fast, languageCorrection: Bool = true, outputs: [OutputFormat] = PageOptions.defaultOutputs)
    {
        self.outputs = outputs
        self.level = level
        self.languageCorrection = languageCorrection
        self.languages = languages
        self.timeoutMilliseconds = timeoutMilliseconds
        self.imageMode = imageMode
        self.skippedStages = skippedStages
        self.candidates = candidates
        self.words = words
        self.minTextHeight = minTextHeight
    }

    public var json: JSON {
        var fields: [(String, JSON)] = [("lang", JSON(languages.joined(separator: "+")))]
        if let timeoutMilliseconds { fields.append(("timeout_ms", JSON(timeoutMilliseconds))) }
        if imageMode != .gray { fields.append(("mode", JSON(imageMode.rawValue))) }
        if !skippedStages.isEmpty { fields.append(("skip", .array(skippedStages.map { JSON($0.rawValue) }))) }
        if candidates > 0 { fields.append(("candidates", JSON(candidates))) }
        if !words.isEmpty { fields.append(("words", .array(words.map { JSON($0) }))) }
        if let minTextHeight { fields.append(("min_text_height", .rounded(minTextHeight, places: 4))) }
        if level != .fast { fields.append(("level", JSON(level.rawValue))) }
        if !languageCorrection { fields.append(("language_correction", false)) }
        if outputs != Self.defaultOutputs { fields.append(("outputs", .array(outputs.map { JSON($0.rawValue) }))) }
        if !secondReading { fields.append(("second_reading", false)) }
        if let imageDPI { fields.append(("image_dpi", JSON(imageDPI))) }
        if pdfType != .pdfa2b { fields.append(("pdf_type", JSON(pdfType.rawValue))) }
        if let pdfImage { fields.append(("pdf_image", JSON(pdfImage.rawValue))) }
        if pdfText != .skip { fields.append(("pdf_text", JSON(pdfText.rawValue))) }
        if engine != .tesseract { fields.append(("engine", JSON(engine.rawValue))) }
        return .object(fields)
    }

    /// Reads options written by `json`; unknown keys are ignored, so newer submitters stay readable.
    public init(json: JSON?) {
        let lang = json?["lang"]?.stringValue ?? "eng"
        languages = lang.split(separator: "+").map(String.init).filter { !$0.isEmpty }
        if languages.isEmpty { languages = ["eng"] }
        timeoutMilliseconds = json?["timeout_ms"]?.intValue
        imageMode = json?["mode"]?.stringValue.flatMap(ImageMode.init(rawValue:)) ?? .gray
        let skipped = Set((json?["skip"]?.arrayValue ?? []).compactMap(\.stringValue))
        skippedStages = CorrectionStage.allCases.filter { skipped.contains($0.rawValue) }
        candidates = min(Self.maximumCandidates, max(0, json?["candidates"]?.intValue ?? 0))
        words = Array((json?["words"]?.arrayValue ?? []).compactMap(\.stringValue).filter { !$0.isEmpty }.prefix(Self.maximumWords))
        minTextHeight = json?["min_text_height"]?.doubleValue.flatMap { (0..<1).contains($0) && $0 > 0 ? $0 : nil }
        level = json?["level"]?.stringValue.flatMap(RecognitionLevel.init(rawValue:)) ?? .fast
        languageCorrection = json?["language_correction"]?.boolValue ?? true
        secondReading = json?["second_reading"]?.boolValue ?? true
        imageDPI = json?["image_dpi"]?.intValue.flatMap { Self.imageDPIRange.contains($0) ? $0 : nil }
        pdfType = json?["pdf_type"]?.stringValue.flatMap(PDFType.init(rawValue:)) ?? .pdfa2b
        pdfImage = json?["pdf_image"]?.stringValue.flatMap(PDFImageChoice.init(rawValue:))
        pdfText = json?["pdf_text"]?.stringValue.flatMap(PDFTextMode.init(rawValue:)) ?? .skip
        engine = json?["engine"]?.stringValue.flatMap(ReadingEngine.init(rawValue:)) ?? .tesseract
        outputs = json?["outputs"]?.arrayValue.map { items in
            OutputFormat.storable.filter { format in items.contains { $0.stringValue == format.rawValue } }
        } ?? Self.defaultOutputs
    }

    /// The languages are to be chosen per page (`--lang auto`).
    public var automaticLanguages: Bool { languages == [Self.automaticLanguage] }
}

/// How hard the engine works on a page.
public enum RecognitionLevel: String, Sendable, CaseIterable {
    /// One reading at the text size Tesseract reads best.
    case fast
    /// Two more readings, one with the text 1.4 times larger and one binarized the other way; each line keeps the
    /// reading with the highest confidence. A third to a half of the pages per second of `fast`, with fewer errors
    /// (docs/decisions/0032-level-fast-accurate.md, Scripts/bench/levels).
    case accurate
}
