#if canImport(Glibc)
import Glibc
#endif

/// A file path as the operating system has it: bytes, which need not be UTF-8. Archives hold names that are
/// not valid UTF-8; turning them into Swift strings would replace bytes and lose the file.
public struct RawPath: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ string: String) { self.bytes = Array(string.utf8) }

    /// For people: invalid bytes shown as \xNN, control characters (newlines in names) escaped.
    public var description: String {
        var out = ""
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x80 {
                switch byte {
                case 0x0A: out += "\\n"
                case 0x09: out += "\\t"
                case 0x0D: out += "\\r"
                case 0x5C: out += "\\\\"
                case 0..<0x20, 0x7F: out += "\\x" + hex(byte)
                default: out.unicodeScalars.append(Unicode.Scalar(byte))
                }
                index += 1
                continue
            }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            if length > 1, index + length <= bytes.count,
               let text = String(validating: bytes[index..<index + length], as: UTF8.self) {
                out += text
                index += length
            } else {
                out += "\\x" + hex(byte)
                index += 1
            }
        }
        return out
    }

    /// The path as a string when it is valid UTF-8.
    public var string: String? { String(validating: bytes, as: UTF8.self) }

    public static func < (a: RawPath, b: RawPath) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    public func appending(_ name: [UInt8]) -> RawPath {
        var result = bytes
        if result.last != UInt8(ascii: "/") { result.append(UInt8(ascii: "/")) }
        result.append(contentsOf: name)
        return RawPath(bytes: result)
    }

    /// The folder that holds this path: "." for a bare name, "/" for a name at the root.
    public var parent: RawPath {
        var end = bytes.endIndex
        while end > bytes.startIndex + 1, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard let slash = bytes[..<end].lastIndex(of: UInt8(ascii: "/")) else { return RawPath(".") }
        return slash == bytes.startIndex ? RawPath("/") : RawPath(bytes: Array(bytes[..<slash]))
    }

    /// This path made absolute against `directory` (itself absolute): unchanged when it starts with "/", else
    /// `directory` + "/" + the path with its leading "./" components dropped.
    public func absolute(in directory: RawPath) -> RawPath {
        if bytes.first == UInt8(ascii: "/") { return self }
        var rest = bytes[...]
        while rest.starts(with: [UInt8(ascii: "."), UInt8(ascii: "/")]) {
            rest = rest.dropFirst(2).drop { $0 == UInt8(ascii: "/") }
        }
        if rest.isEmpty || Array(rest) == [UInt8(ascii: ".")] { return directory }
        return directory.appending(Array(rest))
    }

    /// The process's current directory as raw bytes; nil when it cannot be had (it was removed).
    public static var currentDirectory: RawPath? {
        guard let cwd = getcwd(nil, 0) else { return nil }
        defer { free(cwd) }
        return RawPath(bytes: Array(UnsafeBufferPointer(start: UnsafeRawPointer(cwd).assumingMemoryBound(to: UInt8.self),
                                                        count: strlen(cwd))))
    }

    /// The last component, as bytes.
    public var lastComponent: [UInt8] {
        var end = bytes.count
        while end > 1 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
        let start = bytes[..<end].lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        return Array(bytes[start..<end])
    }

    /// Calls `body` with a NUL-terminated C string of the path.
    public func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        var terminated = bytes.map { CChar(bitPattern: $0) }
        terminated.append(0)
        return try terminated.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    /// The process's arguments as raw bytes (Swift's `CommandLine.arguments` repairs invalid UTF-8).
    public static var arguments: [RawPath] {
        (0..<Int(CommandLine.argc)).map { index in
            guard let pointer = CommandLine.unsafeArgv[index] else { return RawPath(bytes: []) }
            return RawPath(bytes: Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
                                                            count: strlen(pointer))))
        }
    }
}
