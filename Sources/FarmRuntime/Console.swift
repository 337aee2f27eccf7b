#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import FarmCore

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
