import FarmCore
import Leptonica

/// The formats a page can be rendered in.
public enum OutputFormat: String, Sendable, CaseIterable {
    case text, json, hocr, alto, page, pdf
}

/// What a recognizer is asked to do with a page.
public struct RecognitionOptions: Sendable, Equatable {
    /// Stop recognizing a page after this long (nil: no limit).
    public var timeoutMilliseconds: Int?
    /// Renderings to produce from the engine after recognition.
    public var renderings: Set<OutputFormat>
    /// Name shown in hOCR/ALTO/PDF metadata.
    public var sourceName: String
    /// Alternative readings to keep per word (0: none).
    public var candidates: Int
    /// Custom words: recognized words that nearly match one are read as it.
    public var words: [String]
    /// Text lines smaller than this fraction of the page height are not read (nil: all).
    public var minTextHeight: Double?
    /// One reading, or three with the surest line kept (`PageOptions.level`).
    public var level: RecognitionLevel
    /// Custom words and Chinese punctuation applied after recognition (the engine's own word lists are chosen
    /// when it is made: `TesseractRecognizer.init`).
    public var languageCorrection: Bool
    /// At `fast`, weak pages are read again (`TesseractRecognizer+SecondReading.swift`).
    public var secondReading: Bool

    public init(timeoutMilliseconds: Int? = nil, renderings: Set<OutputFormat> = [], sourceName: String = "", candidates: Int = 0,
                words: [String] = [], minTextHeight: Double? = nil, level: RecognitionLevel = .fast,
                languageCorrection: Bool = true, secondReading: Bool = true)
    {
        self.secondReading = secondReading
        self.level = level
        self.languageCorrection = languageCorrection
        self.timeoutMilliseconds = timeoutMilliseconds
        self.renderings = renderings
        self.sourceName = sourceName
        self.candidates = candidates
        self.words = words
        self.minTextHeight = minTextHeight
    }
}


/// A recognized page and the renderings asked for.
public struct RecognizedPage: Sendable {
    public var result: PageResult
    /// Page-level fragments/documents keyed by format: hOCR `ocr_page` div, ALTO `Page` element, one-page PDF.
    public var renderings: [OutputFormat: [UInt8]]

    public init(result: PageResult, renderings: [OutputFormat: [UInt8]] = [:]) {
        self.result = result
        self.renderings = renderings
    }
}

/// The OCR engine seam. One recognizer per page slot, created once and reused; used on its slot's thread only.
public protocol PageRecognizer: AnyObject {
    /// A short name for logs and results, e.g. "tesseract 5.3.0 eng".
    var engineName: String { get }
    func recognize(_ page: DecodedPage, pageNumber: Int, options: RecognitionOptions) throws(PageFailure) -> RecognizedPage
}

/// Returns an empty result at once: for measuring everything around OCR.
public final class NullRecognizer: PageRecognizer {
    public init() {}
    public var engineName: String { "none" }

    public func recognize(_ page: DecodedPage, pageNumber: Int, options: RecognitionOptions) throws(PageFailure) -> RecognizedPage {
        RecognizedPage(result: .empty(width: page.image.width, height: page.image.height,
                                      resolution: page.declaredResolution))
    }
}
