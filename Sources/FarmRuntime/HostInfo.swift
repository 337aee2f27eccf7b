#if canImport(Glibc)
import Glibc
#endif

/// Facts about this host and process.
public enum HostInfo {
    public static var hostname: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    public static var pid: Int { Int(getpid()) }

    /// A random lowercase hex string of `count` characters.
    public static func randomHex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<count).map { _ in digits[Int(generator.next() % 16)] })
    }
}
