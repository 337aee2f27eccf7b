#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where ocrfarm writes for people and programs. Library output that bypasses us (libpng warnings, libjpeg's
/// "Corrupt JPEG data") is kept off the terminal by `captureLibraryNoise()`; our own diagnostics then go to the
/// saved, real standard error.
public enum Console {
    private static let diagnosticsDescriptor = Atomic<Int32>(2)
    private static let noise = Mutex<[String]>([])

    /// Writes text to standard output.
    public static func out(_ text: String) { writeAll(1, text) }

    /// Writes bytes to standard output.
    public static func out(bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeAll(1, $0) }
    }

    /// Writes a line to standard error (the real one, even while library noise is captured).
    public static func error(_ line: String) {
        writeAll(diagnosticsDescriptor.load(ordering: .relaxed), line.hasSuffix("\n") ? line : line + "\n")
    }

    /// Writes text to standard error without adding a newline (progress bars).
    public static func errorRaw(_ text: String) {
        writeAll(diagnosticsDescriptor.load(ordering: .relaxed), text)
    }

    /// True when standard error is a terminal (progress bars only then).
    public static var errorIsTerminal: Bool { isatty(diagnosticsDescriptor.load(ordering: .relaxed)) == 1 }
    public static var outputIsTerminal: Bool { isatty(1) == 1 }

    /// The width of the terminal standard output is, in columns; nil when it is none or does not say.
    public static var outputColumns: Int? {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// The columns `text` takes on a terminal: 2 for each wide character (Han, kana, Hangul, full-width forms, most
    /// emoji: East Asian Width W and F), 0 for a character of marks or zero-width format characters alone, else 1.
    public static func displayWidth(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + displayWidth(of: $1) }
    }

    static func displayWidth(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if isWide(first) { return 2 }
        let category = first.properties.generalCategory
        if category == .nonspacingMark || category == .enclosingMark || category == .format { return 0 }
        return 1
    }

    /// East Asian Width W or F (the blocks, as wcwidth takes them).
    static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3, 0x25FD...0x25FE,
             0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE,
             0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA, 0x26FD, 0x2705,
             0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757, 0x2795...0x2797, 0x27B0, 0x27BF,
             0x2B1B...0x2B1C, 0x2B50, 0x2B55, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18AFF, 0x1B000...0x1B2FF,
             0x1F004, 0x1F0CF, 0x1F18E, 0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F320, 0x1F32D...0x1F335,
             0x1F337...0x1F37C, 0x1F37E...0x1F393, 0x1F3A0...0x1F3CA, 0x1F3CF...0x1F3D3, 0x1F3E0...0x1F3F0,
             0x1F3F4, 0x1F3F8...0x1F43E, 0x1F440, 0x1F442...0x1F4FC, 0x1F4FF...0x1F53D, 0x1F54B...0x1F54E,
             0x1F550...0x1F567, 0x1F57A, 0x1F595...0x1F596, 0x1F5A4, 0x1F5FB...0x1F64F, 0x1F680...0x1F6C5,
             0x1F6CC, 0x1F6D0...0x1F6D2, 0x1F6D5...0x1F6D7, 0x1F6EB...0x1F6EC, 0x1F6F4...0x1F6FC, 0x1F7E0...0x1F7EB,
             0x1F90C...0x1F93A, 0x1F93C...0x1F945, 0x1F947...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x2FFFD,
             0x30000...0x3FFFD:
            true
        default: false
        }
    }

    /// Redirects file descriptor 2 into a pipe drained by a background thread, so that C libraries writing to
    /// stderr directly cannot clutter the terminal or a log. The last lines are kept for `recentLibraryNoise`.
    /// Call once at startup, before any threads that use the libraries.
    public static func captureLibraryNoise() {
        guard diagnosticsDescriptor.load(ordering: .relaxed) == 2 else { return }
        let saved = fcntl(2, F_DUPFD_CLOEXEC, 3)
        var fds: [Int32] = [0, 0]
        guard saved >= 0, pipe(&fds) == 0 else { return }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        guard dup2(writeEnd, 2) >= 0 else { return }
        close(writeEnd)
        diagnosticsDescriptor.store(saved, ordering: .relaxed)
        NativeThread.detach(name: "stderr-drain") {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var pending: [UInt8] = []
            while true {
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { return }
                pending.append(contentsOf: buffer[..<count])
                while let newline = pending.firstIndex(of: 10) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    if !line.isEmpty {
                        noise.withLock { lines in
                            lines.append(line)
                            if lines.count > 100 { lines.removeFirst(lines.count - 100) }
                        }
                    }
                }
            }
        }
    }

    /// The most recent lines that libraries wrote to stderr while it was captured.
    public static var recentLibraryNoise: [String] { noise.withLock { $0 } }

    private static func writeAll(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    /// One writer at a time: a long write (a batch of log lines to a pipe) can be partial, and another thread's
    /// line must not land in the middle of it.
    private static let writeLock = Mutex(())

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        writeLock.withLock { _ in writeAllUnlocked(fd, bytes) }
    }

    private static func writeAllUnlocked(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
