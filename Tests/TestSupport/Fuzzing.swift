import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a fuzzer's input stands for the frames of one wire message: the frames joined by `separator`.
/// A separator, not length prefixes, so that the fuzzer's byte mutations keep most inputs well formed.
public enum FuzzFrames {
    public static let separator: [UInt8] = Array("\n~frame~\n".utf8)

    /// The frames of one fuzz input (an empty input is one empty frame).
    public static func split(_ bytes: [UInt8]) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        var start = 0, at = 0
        while at + separator.count <= bytes.count {
            if bytes[at] == separator[0], bytes[at..<(at + separator.count)].elementsEqual(separator) {
                frames.append(Array(bytes[start..<at]))
                at += separator.count
                start = at
            } else {
                at += 1
            }
        }
        frames.append(Array(bytes[start...]))
        return frames
    }

    /// One fuzz input holding `frames`.
    public static func joined(_ frames: [[UInt8]]) -> [UInt8] {
        Array(frames.joined(separator: separator))
    }
}

/// The shared main of the fuzzers in `Fuzz/`. Built by `Scripts/fuzz` with `-sanitize=fuzzer`, the program hands
/// its arguments to libFuzzer's driver (`LLVMFuzzerRunDriver`, found at run time, so one source serves both
/// builds); built normally, it feeds each file named on the command line (or each file in a named folder) to
/// `check` once and prints what it says, which reproduces a saved crash without the sanitizers. `--write-seeds DIR` writes the seed corpus.
public enum Fuzzing {
    /// The check of the running fuzzer: libFuzzer's callback is a C function and cannot capture it.
    nonisolated(unsafe) private static var check: ([UInt8]) -> String = { _ in "" }

    private typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    private typealias RunDriver = @convention(c) (
        UnsafeMutablePointer<CInt>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>, TestOneInput
    ) -> CInt

    public static func main(name: String, seeds: () throws -> [(name: String, bytes: [UInt8])],
                            check: @escaping ([UInt8]) -> String) -> Never
    {
        Fuzzing.check = check
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--write-seeds" {
            guard arguments.count == 2 else { fail("usage: \(name) --write-seeds DIR") }
            do {
                try FileManager.default.createDirectory(atPath: arguments[1], withIntermediateDirectories: true)
                let written = try seeds()
                for seed in written {
                    try Data(seed.bytes).write(to: URL(fileURLWithPath: arguments[1] + "/" + seed.name))
                }
                print("\(name): wrote \(written.count) seeds to \(arguments[1])")
                exit(0)
            } catch {
                fail("\(name): cannot write the seeds: \(error)")
            }
        }
        // Exported only from the sanitized build (Scripts/fuzz links with --export-dynamic-symbol).
        if let symbol = dlsym(nil, "LLVMFuzzerRunDriver") {
            let driver = unsafeBitCast(symbol, to: RunDriver.self)
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(driver(&argc, &argv, fuzzerTestOneInput))
        }
        guard !arguments.isEmpty, !arguments.contains(where: { $0.hasPrefix("-") }) else {
            fail("""
                usage: \(name) FILE|DIR...   (this build has no libFuzzer: each file is checked once)
                       \(name) --write-seeds DIR
                Scripts/fuzz builds and runs the fuzzing build.
                """)
        }
        var files: [String] = []
        for argument in arguments {
            if let names = try? FileManager.default.contentsOfDirectory(atPath: argument) {
                files += names.sorted().map { argument + "/" + $0 }
            } else {
                files.append(argument)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { fail("\(name): cannot read \(file)") }
            print("\(file): \(check(Array(data)))")
        }
        exit(0)
    }

    fileprivate static func run(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        _ = check(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(64)
    }
}

/// libFuzzer's entry point. Its own `main` needs the symbol at link time; SwiftPM's `main` wins, and calls the
/// driver with this function.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    Fuzzing.run(data, size)
    return 0
}

/// The inputs the fuzzers found (Tests/Fixtures/fuzz/TARGET/), which the unit tests feed through the decoders.
public enum FuzzFindings {
    /// The files kept for `target` ("frame" or "decode"), sorted by name.
    public static func files(_ target: String) -> [String] {
        let folder = Fixtures.path("fuzz/" + target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map { folder + "/" + $0 }
    }
}
