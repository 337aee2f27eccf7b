/// An error from loading ONNX Runtime, opening a model or running it: its kind and a message naming the file and
/// carrying ONNX Runtime's own words.
public struct ONNXRuntimeError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, for callers that react differently (a missing install is not a bad model).
    public enum Kind: String, Sendable {
        /// The shared library could not be opened (not installed, wrong architecture, a dependency missing).
        case libraryMissing
        /// The library has no `OrtGetApiBase`: not ONNX Runtime.
        case symbolMissing
        /// The library's version or API table is older (or newer in major version) than this wrapper was checked with.
        case unsupportedVersion
        /// The model file is missing, unreadable or not a usable ONNX model.
        case modelUnreadable
        /// Anything else ONNX Runtime refused, including an input whose shape does not fit the model or its values.
        case runtime
    }

    public let kind: Kind
    public let message: String
    /// ONNX Runtime's `OrtErrorCode` when the error came from an `OrtStatus` (1 fail, 2 invalid argument, 3 no such
    /// file, 4 no model, 7 invalid protobuf, …), nil for errors found before calling it.
    public let code: Int32?

    public init(_ kind: Kind, _ message: String, code: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.code = code
    }

    public var description: String { "ONNX Runtime error (\(kind.rawValue)): \(message)" }
}
