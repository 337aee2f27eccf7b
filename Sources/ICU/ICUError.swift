import CICU

/// A failed ICU call: ICU's error code and its name (`U_MISSING_RESOURCE_ERROR`…).
public struct ICUError: Error, CustomStringConvertible, Sendable, Equatable {
    public let operation: String
    public let code: Int32
    public let name: String

    init(_ operation: String, status: UErrorCode) {
        self.operation = operation
        code = status.rawValue
        name = String(cString: ocr_u_errorName(status))
    }

    public var description: String { "\(operation): \(name) (\(code))" }
}

/// Facts about the ICU library.
public enum ICULibrary {
    /// The ICU version ("72.1").
    public static var version: String {
        var buffer = [CChar](repeating: 0, count: Int(U_MAX_VERSION_STRING_LENGTH) + 1)
        return buffer.withUnsafeMutableBufferPointer { pointer in
            ocr_u_versionString(pointer.baseAddress!)
            return String(cString: pointer.baseAddress!)
        }
    }
}
