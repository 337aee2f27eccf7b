/// A failed Tesseract operation.
public struct TesseractError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The engine could not start (missing language data, bad data path).
        case initialization
        /// The page took longer than its deadline; recognition was stopped.
        case timeout
        /// Recognition or rendering failed.
        case recognition
        /// Orientation and script detection failed (too little text, or no OSD data).
        case orientation
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
