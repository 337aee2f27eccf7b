import Allocator
import FarmCore
import FarmPipeline
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

/// `ocrfarm version`: versions of ocrfarm and the libraries it runs on.
struct VersionCommand: Command {
    static let name = "version"
    static let abstract = "Show the versions of ocrfarm, Tesseract, Leptonica and the other libraries."
    static let arguments = ""
    static let options: [OptionSpec] = [
        OptionSpec("--verbose", "Also show languages, data path and the OpenMP thread limit in force."),
    ]

    static let discussion = "Exit status: 0; 64 bad usage."

    static let ocrfarmVersion = FarmVersion.string

    let verbose: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "version takes no arguments") }
        verbose = arguments.flag("--verbose")
    }

    func run() throws -> ExitStatus {
        var text = "ocrfarm \(Self.ocrfarmVersion)\n"
        text += "tesseract \(TesseractInfo.version)\n"
        text += "leptonica \(TesseractInfo.leptonicaVersion)\n"
        text += "qpdf \(TesseractInfo.qpdfVersion)\n"
        // The neural engine's files are only found, not loaded: `version` stays instant and needs no runtime.
        do throws(NeuralModelsError) {
            let models = try NeuralModels.locate()
            text += "neural \(NeuralModels.engineName(runtimeVersion: NeuralModels.runtimeVersion)) in \(models.folder)\n"
        } catch {
            text += "neural not installed (Scripts/install-neural)\n"
        }
        text += "document mask \(LazyDocumentMask.summary())\n"
        if verbose {
            text += "tessdata \(TesseractInfo.dataPath)\n"
            text += "languages \(TesseractInfo.installedLanguages.joined(separator: " "))\n"
            text += "osd \(TesseractInfo.hasOrientationData ? "installed" : "missing")\n"
            text += "openmp thread limit \(OpenMP.threadLimit.map(String.init) ?? "unknown")\n"
            text += "allocator \(Allocator.name)\(Allocator.oversizeThreshold.map { " (oversize_threshold \($0))" } ?? "")\n"
            text += "cores \(NativeThread.processorCount)\n"
        }
        Console.out(text)
        return .success
    }
}

/// Tesseract links libgomp, which reads `OMP_THREAD_LIMIT` once, when the library loads. With more than one
/// thread per page, Tesseract is 3–10× slower on small machines, so ocrfarm re-executes itself with the variable
/// set before anything else happens (setting it inside `main` is too late).
enum OpenMP {
    static let variable = "OMP_THREAD_LIMIT"

    /// Re-executes this process with `OMP_THREAD_LIMIT=1` unless that is already in force. Returns only when no
    /// re-execution was needed or it failed (then OCR is slower, but correct).
    static func ensureSingleThreaded() {
        if let value = getenv(variable), String(cString: value) == "1" { return }
        setenv(variable, "1", 1)
        // Through the executable's real path, so the process keeps its name ("ocrfarm", not "exe") in ps and top.
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let path = count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/proc/self/exe"
        execv(path, CommandLine.unsafeArgv)
    }

    /// The limit libgomp actually applies (`omp_get_thread_limit`), or nil when libgomp is not loaded.
    static var threadLimit: Int? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "omp_get_thread_limit") else { return nil }
        typealias Function = @convention(c) () -> Int32
        return Int(unsafeBitCast(symbol, to: Function.self)())
    }
}
