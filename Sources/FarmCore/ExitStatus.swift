/// A process exit status, after sysexits.h.
public struct ExitStatus: RawRepresentable, Sendable, Equatable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let success = ExitStatus(rawValue: 0)
    /// Some work failed (generic).
    public static let failure = ExitStatus(rawValue: 1)
    /// Everything was read and written, but a PDF that was to be PDF/A-2B could not be made one (it is written as
    /// a plain PDF). Not in sysexits.h; OCRmyPDF's exit status for the same case.
    public static let notArchival = ExitStatus(rawValue: 10)
    /// The command line was wrong.
    public static let usage = ExitStatus(rawValue: 64)
    /// Some input was bad: pages failed.
    public static let dataError = ExitStatus(rawValue: 65)
    /// No input could be read.
    public static let noInput = ExitStatus(rawValue: 66)
    /// A service (coordinator, engine, language data) is unavailable.
    public static let unavailable = ExitStatus(rawValue: 69)
    /// An internal error.
    public static let software = ExitStatus(rawValue: 70)
    /// Cannot create an output file.
    public static let cannotCreate = ExitStatus(rawValue: 73)
    /// Input/output error (store, disk).
    public static let ioError = ExitStatus(rawValue: 74)
    /// The store is damaged (SQLite's quick_check fails, or it reports corruption). sysexits.h has no code for
    /// this; 76 is its EX_PROTOCOL, which ocrfarm does not otherwise use, so scripts can tell a damaged store
    /// (restore a backup) from a full disk (74, wait for space).
    public static let damagedStore = ExitStatus(rawValue: 76)
    /// Temporary failure; try again.
    public static let tryAgain = ExitStatus(rawValue: 75)
    /// Configuration error.
    public static let config = ExitStatus(rawValue: 78)

    public var description: String { String(rawValue) }
}
