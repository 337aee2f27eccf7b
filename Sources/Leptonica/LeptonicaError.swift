import CLeptonica
#if canImport(Glibc)
import Glibc
#endif

/// A failed Leptonica operation, with the messages Leptonica wrote while it ran (captured, never printed).
public struct LeptonicaError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, for callers that act on it (a failure code) without reading the message.
    public enum Kind: Sendable, Equatable {
        case failed
        /// The image is over the pixel limit given to decoding; nothing was decoded.
        case imageTooLarge
        /// Memory for the image could not be had (an allocation failed, and a probe of the same size fails too).
        case outOfMemory
    }

    public let operation: String
    public let message: String
    public let kind: Kind

    public init(_ operation: String, message: String, kind: Kind = .failed) {
        self.operation = operation
        self.message = message
        self.kind = kind
    }

    /// Makes an error for `operation` from the messages Leptonica left on this thread since the last call,
    /// or from `fallback` when it said nothing.
    static func captured(_ operation: String, fallback: String) -> LeptonicaError {
        let lines = LeptonicaMessages.take()
        return LeptonicaError(operation, message: lines.isEmpty ? fallback : lines.joined(separator: "; "))
    }

    public var description: String { "\(operation): \(message)" }
}

/// Leptonica prints errors and warnings through one process-wide stderr hook. We install a handler that keeps
/// each thread's messages in a thread-local buffer, so a failure can carry them and nothing reaches stderr.
enum LeptonicaMessages {
    final class Buffer {
        var lines: [String] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<Buffer>.fromOpaque(pointer).release() }
        }
        return key
    }()

    /// Installed once, before the first Leptonica call of the process (see `LeptonicaLibrary.prepare()`).
    static let installed: Void = {
        _ = key
        setMsgSeverity(Int32(L_SEVERITY_WARNING))
        leptSetStderrHandler { text in
            guard let text else { return }
            LeptonicaMessages.append(String(cString: text))
        }
    }()

    private static var buffer: Buffer {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Buffer>.fromOpaque(pointer).takeUnretainedValue()
        }
        let buffer = Buffer()
        pthread_setspecific(key, Unmanaged.passRetained(buffer).toOpaque())
        return buffer
    }

    static func append(_ raw: String) {
        var line = raw.trimmingSuffix(while: { $0 == "\n" || $0 == " " })
        for prefix in ["Error in ", "Warning in ", "Info in "] where line.hasPrefix(prefix) {
            line.removeFirst(prefix.count)
        }
        guard !line.isEmpty else { return }
        let buffer = buffer
        buffer.lines.append(line)
        if buffer.lines.count > 16 { buffer.lines.removeFirst(buffer.lines.count - 16) }
    }

    /// The messages left on this thread, cleared.
    static func take() -> [String] {
        let buffer = buffer
        defer { buffer.lines.removeAll() }
        return buffer.lines
    }
}

extension String {
    func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return String(self[..<end])
    }
}

/// Library-wide setup and facts.
public enum LeptonicaLibrary {
    /// Routes Leptonica's messages into thrown errors. Called by every entry point; cheap after the first call.
    @inline(__always)
    public static func prepare() { LeptonicaMessages.installed }

    /// Messages Leptonica left on this thread (for callers such as Tesseract that use it indirectly), cleared.
    public static func takeMessages() -> [String] { LeptonicaMessages.take() }

    /// Versions of Leptonica and the image libraries it was built with.
    public static var versions: String {
        prepare()
        let library = String(cString: getLeptonicaVersion())
        guard let images = getImagelibVersions() else { return library }
        defer { lept_free(images) }
        return "\(library) (\(String(cString: images)))"
    }
}
