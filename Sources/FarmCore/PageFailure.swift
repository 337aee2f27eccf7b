/// A stable, machine-readable reason why a page failed. Codes are kebab-case words kept in the store,
/// printed in reports and filtered on by `requeue --error`.
public struct FailureCode: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The source file cannot be read (missing, no permission, a directory).
    public static let unreadable = FailureCode("unreadable")
    /// The bytes are not an image any decoder accepts.
    public static let decodeFailed = FailureCode("decode-failed")
    /// The image is over the pixel limit (a decompression bomb, or a huge scan).
    public static let imageTooLarge = FailureCode("image-too-large")
    /// Memory for the page could not be had on this worker now (an allocation failed): another try may succeed.
    public static let outOfMemory = FailureCode("out-of-memory")
    /// Recognition ran past the page's time limit.
    public static let timeout = FailureCode("timeout")
    /// The OCR engine failed on the page.
    public static let ocrFailed = FailureCode("ocr-failed")
    /// The worker holding the page died or went silent, every time it was tried.
    public static let workerLost = FailureCode("worker-lost")
    /// The page is bigger than a job frame may carry.
    public static let pageTooLarge = FailureCode("page-too-large")
    /// The source file changed or disappeared after it was submitted.
    public static let sourceChanged = FailureCode("source-changed")
    /// A JOB's page bytes did not match the SHA-256 the coordinator sent with them (damaged on the way): retried.
    public static let jobCorrupted = FailureCode("job-corrupted")
    /// A PDF could not be opened or rasterized.
    public static let pdfFailed = FailureCode("pdf-failed")
    /// A PDF needs a password to open.
    public static let pdfEncrypted = FailureCode("pdf-encrypted")
    /// A worker's result was not kept: a rendering that does not parse (a PDF qpdf cannot read, XML that is not
    /// well-formed), text that is not UTF-8, or an artifact the farm does not store.
    public static let invalidResult = FailureCode("invalid-result")
    /// An internal error in ocrfarm itself.
    public static let internalError = FailureCode("internal-error")

    public var description: String { rawValue }
    public static func < (lhs: FailureCode, rhs: FailureCode) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Why one page failed: the stage, a code, a message for people, and whether trying again could help.
public struct PageFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public let stage: String
    public let code: FailureCode
    public let message: String
    public let retryable: Bool

    public init(stage: String, code: FailureCode, message: String, retryable: Bool = false) {
        self.stage = stage
        self.code = code
        self.message = message
        self.retryable = retryable
    }

    public var description: String { "\(code): \(message)" }
}
