import FarmCore
import Foundation
import Synchronization
import FarmRuntime

/// Paths and helpers shared by the test targets.
public enum Fixtures {
    /// The package root, found from this file's location.
    public static let packageRoot: String = {
        var path = #filePath
        for _ in 0..<3 { path = (path as NSString).deletingLastPathComponent }
        return path
    }()

    public static var directory: String { packageRoot + "/Tests/Fixtures" }

    public static func path(_ name: String) -> String { directory + "/" + name }

    public static var phototest: String { path("tesseract-testdata/phototest.tif") }
    public static var phototestTruth: String {
        (try? String(contentsOfFile: path("tesseract-testdata/phototest.gt.txt"), encoding: .utf8)) ?? ""
    }

    /// The shared corpus next to the project (benchmarks' data), if present.
    public static var sharedCorpus: String { packageRoot + "/../shared/corpus" }

    /// The built `ocrfarm` binary next to the test bundle.
    public static var binary: String {
        let candidates = [
            (Bundle.main.bundlePath as NSString).deletingLastPathComponent + "/ocrfarm",
            (CommandLine.arguments[0] as NSString).deletingLastPathComponent + "/ocrfarm",
            packageRoot + "/.build/debug/ocrfarm",
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates.last!
    }
}

/// A temporary directory removed when the value is released, or when the test process exits if it never is (a
/// suite's shared fixture held in a `static let` lives as long as the process).
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String

    public init(_ prefix: String = "ocrfarm-test") {
        path = (try? FileSystem.makeTemporaryDirectory(prefix: prefix)) ?? "/tmp/\(prefix)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        _ = Self.live.withLock { $0.insert(path) }
    }

    deinit {
        FileSystem.remove(path)
        _ = Self.live.withLock { $0.remove(path) }
    }

    /// The directories not yet released. Made once, on first use, which is when the process is asked to remove
    /// what is left of them at exit.
    private static let live: Mutex<Set<String>> = {
        atexit { for path in TemporaryDirectory.live.withLock({ $0 }) { FileSystem.remove(path) } }
        return Mutex([])
    }()

    public func file(_ name: String) -> String { path + "/" + name }

    @discardableResult
    public func write(_ name: String, _ bytes: [UInt8]) -> String {
        let file = file(name)
        _ = FileManager.default.createFile(atPath: file, contents: Data(bytes))
        return file
    }

    @discardableResult
    public func write(_ name: String, text: String) -> String { write(name, Array(text.utf8)) }
}

/// What a finished process left.
public struct ProcessOutput: Sendable {
    public let status: Int32
    public let stdout: Data
    public let stderr: String
    public var text: String { String(decoding: stdout, as: UTF8.self) }
    public var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// Runs programs as separate processes and collects their output.
public enum Run {
    /// Runs `executable` with `arguments`, waits, and returns its output. `environment` entries are added to (or,
    /// with a nil value, removed from) this process's environment.
    public static func process(_ executable: String, _ arguments: [String], environment: [String: String?] = [:],
                               stdin: Data? = nil, currentDirectory: String? = nil) throws -> ProcessOutput
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment {
            if let value { env[key] = value } else { env.removeValue(forKey: key) }
        }
        process.environment = env
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        let inPipe = Pipe()
        process.standardInput = inPipe
        try process.run()
        if let stdin { inPipe.fileHandleForWriting.write(stdin) }
        try? inPipe.fileHandleForWriting.close()
        // Read both pipes concurrently so a chatty child cannot block on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = errPipe.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = outPipe.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ProcessOutput(status: process.terminationStatus, stdout: outData, stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs the built `ocrfarm` binary.
    public static func ocrfarm(_ arguments: [String], environment: [String: String?] = [:], stdin: Data? = nil,
                               currentDirectory: String? = nil) throws -> ProcessOutput
    {
        try process(Fixtures.binary, arguments, environment: environment, stdin: stdin, currentDirectory: currentDirectory)
    }

    /// Finds a program on PATH.
    public static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// Files that decoders must refuse, made fresh by each test.
public enum BadInput {
    /// A PNG whose header declares `width`×`height` pixels of 8-bit gray but carries almost no data.
    public static func pngBomb(width: UInt32 = 50_000, height: UInt32 = 50_000) -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let typeBytes = Array(type.utf8)
            var out = bigEndian(UInt32(data.count)) + typeBytes + data
            out += bigEndian(crc32(typeBytes + data))
            return out
        }
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let header = bigEndian(width) + bigEndian(height) + [8, 0, 0, 0, 0]
        // A stored (uncompressed) zlib stream of 1,000 zero bytes: enough for a decoder to start allocating.
        let payload = [UInt8](repeating: 0, count: 1000)
        var zlib: [UInt8] = [0x78, 0x01, 0x01, UInt8(payload.count & 0xFF), UInt8(payload.count >> 8),
                             UInt8(~payload.count & 0xFF), UInt8((~payload.count >> 8) & 0xFF)]
        zlib += payload
        zlib += bigEndian(adler32(payload))
        return signature + chunk("IHDR", header) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    public static func randomBytes(_ count: Int, seed: UInt64 = 42) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return (b << 16) | a
    }
}

extension Fixtures {
    /// The bytes of a fixture file.
    public static func read(_ name: String) throws -> [UInt8] { try FileSystem.read(path(name)) }
}

/// Small valid images made on the fly.
public enum TestImages {
    /// A valid 8-bit gray PNG, all one shade, with `marker` in a text chunk so every file's content differs.
    public static func png(width: UInt32 = 8, height: UInt32 = 8, shade: UInt8 = 255, marker: String = "") -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let typeBytes = Array(type.utf8)
            return BadInput.bigEndian(UInt32(data.count)) + typeBytes + data + BadInput.bigEndian(BadInput.crc32(typeBytes + data))
        }
        var raw: [UInt8] = []
        for _ in 0..<height { raw.append(0); raw += [UInt8](repeating: shade, count: Int(width)) }
        var zlib: [UInt8] = [0x78, 0x01, 0x01, UInt8(raw.count & 0xFF), UInt8(raw.count >> 8),
                             UInt8(~raw.count & 0xFF), UInt8((~raw.count >> 8) & 0xFF)]
        zlib += raw + BadInput.bigEndian(BadInput.adler32(raw))
        let header = BadInput.bigEndian(width) + BadInput.bigEndian(height) + [8, 0, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header)
            + chunk("tEXt", Array("Comment\0\(marker)".utf8)) + chunk("IDAT", zlib) + chunk("IEND", [])
    }

    /// `count` copies of phototest.tif, each with different trailing bytes (so each is its own document).
    public static func phototestCopies(_ count: Int, in folder: TemporaryDirectory, prefix: String = "photo") throws -> String {
        let directory = folder.file(prefix)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let original = try Fixtures.read("tesseract-testdata/phototest.tif")
        for index in 0..<count {
            folder.write("\(prefix)/\(prefix)-\(index).tif", original + Array("copy \(index)".utf8))
        }
        return directory
    }

    /// `count` tiny distinct PNGs in a folder.
    public static func tinyPages(_ count: Int, in folder: TemporaryDirectory, prefix: String = "tiny") throws -> String {
        let directory = folder.file(prefix)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for index in 0..<count {
            folder.write("\(prefix)/\(prefix)-\(index).png", png(marker: "\(prefix) \(index)"))
        }
        return directory
    }
}

public enum TestPDF {
    /// A valid PDF with one page per entry, each `width` × `height` points (its media box) turned by `rotate`
    /// (/Rotate), showing a gray frame and a line of text: what a page box alone makes big (a render bomb).
    public static func pages(_ boxes: [(width: Int, height: Int, rotate: Int)]) -> [UInt8] {
        let count = boxes.count
        var objects: [String] = []
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        let kids = (0..<count).map { "\(3 + 2 * $0) 0 R" }.joined(separator: " ")
        objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(count) >>")
        let font = 3 + 2 * count
        for (index, box) in boxes.enumerated() {
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(box.width) \(box.height)] /Rotate \(box.rotate) "
                           + "/Contents \(4 + 2 * index) 0 R /Resources << /Font << /F1 \(font) 0 R >> >> >>")
            let stream = "0.5 g 10 10 \(box.width - 20) \(box.height - 20) re S 0 g "
                + "BT /F1 24 Tf 40 \(box.height / 2) Td (Page \(index + 1) of a big box) Tj ET"
            objects.append("<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream")
        }
        objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
        return assembled(objects)
    }

    /// A one-page PDF whose page resources are an array nested `depth` deep instead of a dictionary (a damaged or
    /// hostile file): its text's font cannot be found, so viewers draw the page without it.
    public static func damagedResources(_ text: String, depth: Int = 50_000) -> [UInt8] {
        let stream = "BT /F1 24 Tf 40 400 Td (\(text)) Tj ET"
        return assembled([
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources "
                + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + " >>",
            "<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream",
        ])
    }

    static func assembled(_ objects: [String]) -> [UInt8] {
        var pdf = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(pdf.utf8.count)
            pdf += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = pdf.utf8.count
        pdf += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets {
            let digits = String(offset)
            pdf += String(repeating: "0", count: 10 - digits.count) + digits + " 00000 n \n"
        }
        pdf += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(pdf.utf8)
    }

    /// A PDF of `count` small pages (`width` × `height` points), page N showing "Page N of COUNT", all pages sharing
    /// one font: the case where a page's own share of the file is tiny.
    public static func numbered(_ count: Int, width: Int = 240, height: Int = 60) -> [UInt8] {
        var objects: [String] = []
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        let kids = (0..<count).map { "\(3 + 2 * $0) 0 R" }.joined(separator: " ")
        objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(count) >>")
        let font = 3 + 2 * count
        for index in 0..<count {
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(width) \(height)] /Contents \(4 + 2 * index) 0 R "
                           + "/Resources << /Font << /F1 \(font) 0 R >> >> >>")
            let stream = "BT /F1 16 Tf 16 \(height / 2 - 6) Td (Page \(index + 1) of \(count)) Tj ET"
            objects.append("<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream")
        }
        objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
        return assembled(objects)
    }

    /// A minimal valid one-page PDF whose page shows `text`.
    public static func onePage(_ text: String) -> [UInt8] {
        var objects: [String] = []
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        objects.append("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
        objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
        let stream = "BT /F1 18 Tf 20 50 Td (\(text)) Tj ET"
        objects.append("<< /Length \(stream.utf8.count) >>\nstream\n\(stream)\nendstream")
        objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
        return assembled(objects)
    }
}
