#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// ONNX Runtime, loaded at run time from its shared library with `dlopen`, so that building ocrfarm and running it
/// with Tesseract alone need nothing of it.
///
/// Owns the library handle, the `OrtApi` table read from it and one `OrtEnv` (released with `ReleaseEnv` in
/// `deinit`). Made once per library path per process by `load(libraryPath:)` and kept for the process's life, so in
/// practice it is never released; the library is never unloaded (sessions, thread pools and ONNX Runtime's own
/// statics live in it).
/// Thread-safety: the table is immutable and `OrtEnv` is documented thread-safe; sessions made from it on different
/// threads share nothing else.
public final class ONNXRuntime: @unchecked Sendable {
    /// The library's own version string (`OrtApiBase.GetVersionString`), e.g. "1.32.0".
    public let version: String
    /// The path the library was loaded from.
    public let libraryPath: String

    let api: OrtApi
    let environment: OpaquePointer
    /// ONNX Runtime's default CPU allocator (`GetAllocatorWithDefaultOptions`): one static instance, never freed;
    /// the strings it hands out (names, metadata) are freed with it.
    let allocator: UnsafeMutableRawPointer
    private let library: UnsafeMutableRawPointer

    /// The runtimes loaded so far, by the path they were asked for with. Held under the lock while loading, so two
    /// threads asking at once load once.
    private static let loaded = Mutex<[String: ONNXRuntime]>([:])

    /// The runtime at `libraryPath` (a path to `libonnxruntime.so.*`), loading it on first use in this process.
    /// Failures are not remembered: a later call tries again (e.g. after an install).
    public static func load(libraryPath: String) throws(ONNXRuntimeError) -> ONNXRuntime {
        try loaded.withLock { (cache) throws(ONNXRuntimeError) -> ONNXRuntime in
            if let runtime = cache[libraryPath] { return runtime }
            let runtime = try ONNXRuntime(libraryPath: libraryPath)
            cache[libraryPath] = runtime
            return runtime
        }
    }

    private init(libraryPath: String) throws(ONNXRuntimeError) {
        // RTLD_LOCAL: ONNX Runtime's symbols (and its copy of protobuf) stay out of the global namespace.
        guard let library = dlopen(libraryPath, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown reason"
            throw ONNXRuntimeError(.libraryMissing,
                                   "cannot load ONNX Runtime from \(libraryPath): \(reason)")
        }
        // Anything that fails before `self` is complete closes the library again; nothing of it is in use yet.
        func fail(_ error: ONNXRuntimeError) -> ONNXRuntimeError {
            dlclose(library)
            return error
        }
        guard let symbol = dlsym(library, "OrtGetApiBase") else {
            throw fail(ONNXRuntimeError(.symbolMissing, "\(libraryPath) has no OrtGetApiBase: not ONNX Runtime"))
        }
        // const OrtApiBase* OrtGetApiBase(void); OrtApiBase is { GetApi(uint32_t), GetVersionString(void) }.
        typealias GetApiBase = @convention(c) () -> UnsafeRawPointer?
        typealias GetApi = @convention(c) (UInt32) -> UnsafeRawPointer?
        typealias GetVersionString = @convention(c) () -> UnsafePointer<CChar>?
        guard let base = unsafeBitCast(symbol, to: GetApiBase.self)(),
              let getApiSlot = base.load(as: UnsafeRawPointer?.self),
              let versionSlot = base.load(fromByteOffset: MemoryLayout<UnsafeRawPointer?>.stride,
                                          as: UnsafeRawPointer?.self)
        else {
            throw fail(ONNXRuntimeError(.symbolMissing, "\(libraryPath): OrtGetApiBase returned no usable OrtApiBase"))
        }
        let getApi = unsafeBitCast(getApiSlot, to: GetApi.self)
        let getVersionString = unsafeBitCast(versionSlot, to: GetVersionString.self)
        let version = getVersionString().map { String(cString: $0) } ?? ""
        guard Self.isSupported(version) else {
            throw fail(ONNXRuntimeError(.unsupportedVersion,
                                        "\(libraryPath) is ONNX Runtime '\(version)'; this wrapper needs 1.\(oldestSupportedMinor) or a later 1.x"))
        }
        guard let table = getApi(pinnedAPIVersion) else {
            throw fail(ONNXRuntimeError(.unsupportedVersion,
                                        "\(libraryPath) (ONNX Runtime \(version)) does not offer OrtApi version \(pinnedAPIVersion)"))
        }
        let api: OrtApi
        do throws(ONNXRuntimeError) {
            api = try OrtApi(table: table, libraryPath: libraryPath)
        } catch {
            throw fail(error)
        }
        var environment: OpaquePointer?
        do throws(ONNXRuntimeError) {
            try api.check(api.createEnv(OrtConstant.loggingLevelError, "ocrfarm", &environment), .runtime,
                          "\(libraryPath): CreateEnv")
        } catch {
            throw fail(error)
        }
        guard let environment else {
            throw fail(ONNXRuntimeError(.runtime, "\(libraryPath): CreateEnv returned no environment"))
        }
        var allocator: UnsafeMutableRawPointer?
        let status = api.getAllocatorWithDefaultOptions(&allocator)
        guard status == nil, let allocator else {
            if let status { api.releaseStatus(status) }
            api.releaseEnv(environment)
            throw fail(ONNXRuntimeError(.runtime, "\(libraryPath): GetAllocatorWithDefaultOptions failed"))
        }
        self.library = library
        self.allocator = allocator
        self.api = api
        self.environment = environment
        self.version = version
        self.libraryPath = libraryPath
    }

    deinit {
        api.releaseEnv(environment)
        // `library` stays loaded: unloading code that has started threads and registered thread-local
        // destructors is not safe, and a process loads it at most once per path anyway.
    }

    /// Whether a version string names a 1.x release at least as new as the pinned API needs ("1.32.0" yes,
    /// "1.7.2" no, "2.0.0" no: a new major version may break the table).
    static func isSupported(_ version: String) -> Bool {
        let parts = version.split(separator: ".").map { Int($0) }
        guard parts.count >= 2, let major = parts[0], let minor = parts[1] else { return false }
        return major == 1 && minor >= oldestSupportedMinor
    }
}
