/// The slice of ONNX Runtime's C API this module calls, reached through the versioned `OrtApi` table by position.
///
/// No C header exists on this machine (Debian has no package, the wheel has no header), so the function types are
/// declared here as `@convention(c)` types and each is read from the table at its position. `OrtApi` is
/// append-only: a member's position never changes from one release to the next, so a table asked for at
/// `pinnedVersion` has these members where they are listed below in every later library.

/// `ORT_API_VERSION` asked of `OrtApiBase.GetApi`: the oldest API version whose header was checked to hold every
/// member below (onnxruntime_c_api.h at API 8 lists them all, at the same positions as the API 13 header).
let pinnedAPIVersion: UInt32 = 8

/// The oldest library release that answers `GetApi(pinnedAPIVersion)` (API 8 is ONNX Runtime 1.8).
let oldestSupportedMinor = 8

/// Positions (0-based) in `struct OrtApi` of the members this module calls.
///
/// Counted member by member, each `ORT_API2_STATUS(…)`, `ORT_CLASS_RELEASE(…)` and plain function pointer being one,
/// in microsoft/onnxruntime include/onnxruntime/core/session/onnxruntime_c_api.h as stored at API 13 (commit
/// 0017800f) and at API 8 (commit 44885662); the 1.32 table keeps them (append-only), and the golden tests against
/// the Python binding of 1.32.0 (ONNXRuntimeGoldenTests) fail if any of them is off.
enum OrtApiPosition {
    static let getErrorCode = 1
    static let getErrorMessage = 2
    static let createEnv = 3
    static let createSession = 7
    static let run = 9
    static let createSessionOptions = 10
    static let setSessionExecutionMode = 13
    static let enableCpuMemArena = 18
    static let disableCpuMemArena = 19
    static let setSessionGraphOptimizationLevel = 23
    static let setIntraOpNumThreads = 24
    static let setInterOpNumThreads = 25
    static let sessionGetInputCount = 30
    static let sessionGetOutputCount = 31
    static let sessionGetInputName = 36
    static let sessionGetOutputName = 37
    static let createTensorWithDataAsOrtValue = 49
    static let isTensor = 50
    static let getTensorMutableData = 51
    static let getTensorElementType = 60
    static let getDimensionsCount = 61
    static let getDimensions = 62
    static let getTensorShapeElementCount = 64
    static let getTensorTypeAndShape = 65
    static let createCpuMemoryInfo = 69
    static let allocatorFree = 76
    static let getAllocatorWithDefaultOptions = 78
    static let releaseEnv = 92
    static let releaseStatus = 93
    static let releaseMemoryInfo = 94
    static let releaseSession = 95
    static let releaseValue = 96
    static let releaseTensorTypeAndShapeInfo = 99
    static let releaseSessionOptions = 100
    static let sessionGetModelMetadata = 111
    static let modelMetadataLookupCustomMetadataMap = 116
    static let releaseModelMetadata = 118
    // A CUDA execution provider would be appended with SessionOptionsAppendExecutionProvider_CUDA (a later
    // member): count and check its position in the header the same way before adding it here.
}

/// C enum values used (from the same header; C enums are `int`).
enum OrtConstant {
    static let loggingLevelError: Int32 = 3          // ORT_LOGGING_LEVEL_ERROR: warnings would go to stderr
    static let sequential: Int32 = 0                 // ExecutionMode.ORT_SEQUENTIAL
    static let enableAll: Int32 = 99                 // GraphOptimizationLevel.ORT_ENABLE_ALL
    static let deviceAllocator: Int32 = 0            // OrtAllocatorType.OrtDeviceAllocator
    static let memTypeDefault: Int32 = 0             // OrtMemType.OrtMemTypeDefault
    static let elementFloat: Int32 = 1               // ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT
}

// The C function types, one per member called. `OrtStatus*` (nil on success) and every Ort object are opaque:
// `OpaquePointer`; `OrtAllocator*` is a struct ONNX Runtime owns, passed through as a raw pointer.
typealias OrtStatusResult = OpaquePointer?
typealias OrtGetErrorCode = @convention(c) (OpaquePointer) -> Int32
typealias OrtGetErrorMessage = @convention(c) (OpaquePointer) -> UnsafePointer<CChar>?
typealias OrtCreateEnv = @convention(c) (Int32, UnsafePointer<CChar>, UnsafeMutablePointer<OpaquePointer?>) -> OrtStatusResult
typealias OrtCreateSession = @convention(c) (OpaquePointer, UnsafePointer<CChar>, OpaquePointer,
                                             UnsafeMutablePointer<OpaquePointer?>) -> OrtStatusResult
typealias OrtRun = @convention(c) (OpaquePointer, OpaquePointer?, UnsafePointer<UnsafePointer<CChar>?>,
                                   UnsafePointer<OpaquePointer?>, Int, UnsafePointer<UnsafePointer<CChar>?>, Int,
                                   UnsafeMutablePointer<OpaquePointer?>) -> OrtStatusResult
typealias OrtCreateSessionOptions = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> OrtStatusResult
typealias OrtSetOptionInt = @convention(c) (OpaquePointer, Int32) -> OrtStatusResult
typealias OrtSetOption = @convention(c) (OpaquePointer) -> OrtStatusResult
typealias OrtSessionGetCount = @convention(c) (OpaquePointer, UnsafeMutablePointer<Int>) -> OrtStatusResult
typealias OrtSessionGetName = @convention(c) (OpaquePointer, Int, UnsafeMutableRawPointer,
                                              UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> OrtStatusResult
typealias OrtCreateTensorWithData = @convention(c) (OpaquePointer, UnsafeMutableRawPointer, Int, UnsafePointer<Int64>,
                                                    Int, Int32, UnsafeMutablePointer<OpaquePointer?>) -> OrtStatusResult
typealias OrtIsTensor = @convention(c) (OpaquePointer, UnsafeMutablePointer<Int32>) -> OrtStatusResult
typealias OrtGetTensorMutableData = @convention(c) (OpaquePointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> OrtStatusResult
typealias OrtGetTensorElementType = @convention(c) (OpaquePointer, UnsafeMutablePointer<Int32>) -> OrtStatusResult
typealias OrtGetDimensionsCount = @convention(c) (OpaquePointer, UnsafeMutablePointer<Int>) -> OrtStatusResult
typealias OrtGetDimensions = @convention(c) (OpaquePointer, UnsafeMutablePointer<Int64>, Int) -> OrtStatusResult
typealias OrtGetTensorShapeElementCount = @convention(c) (OpaquePointer, UnsafeMutablePointer<Int>) -> OrtStatusResult
typealias OrtGetTensorTypeAndShape = @convention(c) (OpaquePointer, UnsafeMutablePointer<OpaquePointer?>) -> OrtStatusResult
typealias OrtCreateCpuMemoryInfo = @convention(c) (Int32, Int32, UnsafeMutablePointer<OpaquePointer?>) -> OrtStatusResult
typealias OrtAllocatorFree = @convention(c) (UnsafeMutableRawPointer, UnsafeMutableRawPointer?) -> OrtStatusResult
typealias OrtGetAllocatorWithDefaultOptions = @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> OrtStatusResult
typealias OrtRelease = @convention(c) (OpaquePointer?) -> Void
typealias OrtSessionGetModelMetadata = @convention(c) (OpaquePointer, UnsafeMutablePointer<OpaquePointer?>) -> OrtStatusResult
typealias OrtLookupCustomMetadata = @convention(c) (OpaquePointer, UnsafeMutableRawPointer, UnsafePointer<CChar>,
                                                    UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> OrtStatusResult

/// The members of one `OrtApi` table, each read once at its position and typed. Immutable; the table it was read
/// from is ONNX Runtime's static data, valid while the library stays loaded (it is never unloaded).
struct OrtApi {
    let getErrorCode: OrtGetErrorCode
    let getErrorMessage: OrtGetErrorMessage
    let createEnv: OrtCreateEnv
    let createSession: OrtCreateSession
    let run: OrtRun
    let createSessionOptions: OrtCreateSessionOptions
    let setSessionExecutionMode: OrtSetOptionInt
    let enableCpuMemArena: OrtSetOption
    let disableCpuMemArena: OrtSetOption
    let setSessionGraphOptimizationLevel: OrtSetOptionInt
    let setIntraOpNumThreads: OrtSetOptionInt
    let setInterOpNumThreads: OrtSetOptionInt
    let sessionGetInputCount: OrtSessionGetCount
    let sessionGetOutputCount: OrtSessionGetCount
    let sessionGetInputName: OrtSessionGetName
    let sessionGetOutputName: OrtSessionGetName
    let createTensorWithDataAsOrtValue: OrtCreateTensorWithData
    let isTensor: OrtIsTensor
    let getTensorMutableData: OrtGetTensorMutableData
    let getTensorElementType: OrtGetTensorElementType
    let getDimensionsCount: OrtGetDimensionsCount
    let getDimensions: OrtGetDimensions
    let getTensorShapeElementCount: OrtGetTensorShapeElementCount
    let getTensorTypeAndShape: OrtGetTensorTypeAndShape
    let createCpuMemoryInfo: OrtCreateCpuMemoryInfo
    let allocatorFree: OrtAllocatorFree
    let getAllocatorWithDefaultOptions: OrtGetAllocatorWithDefaultOptions
    let releaseEnv: OrtRelease
    let releaseStatus: OrtRelease
    let releaseMemoryInfo: OrtRelease
    let releaseSession: OrtRelease
    let releaseValue: OrtRelease
    let releaseTensorTypeAndShapeInfo: OrtRelease
    let releaseSessionOptions: OrtRelease
    let sessionGetModelMetadata: OrtSessionGetModelMetadata
    let modelMetadataLookupCustomMetadataMap: OrtLookupCustomMetadata
    let releaseModelMetadata: OrtRelease

    /// Reads every member from `table` (what `GetApi(pinnedAPIVersion)` returned). A null member means the table
    /// is not what this module was written against.
    init(table: UnsafeRawPointer, libraryPath: String) throws(ONNXRuntimeError) {
        func member<F>(_ position: Int, _ name: String, as type: F.Type) throws(ONNXRuntimeError) -> F {
            let slot = table.load(fromByteOffset: position * MemoryLayout<UnsafeRawPointer?>.stride,
                                  as: UnsafeRawPointer?.self)
            guard let slot else {
                throw ONNXRuntimeError(.unsupportedVersion,
                                       "\(libraryPath): OrtApi member \(name) (position \(position)) is empty")
            }
            return unsafeBitCast(slot, to: type)
        }
        typealias P = OrtApiPosition
        getErrorCode = try member(P.getErrorCode, "GetErrorCode", as: OrtGetErrorCode.self)
        getErrorMessage = try member(P.getErrorMessage, "GetErrorMessage", as: OrtGetErrorMessage.self)
        createEnv = try member(P.createEnv, "CreateEnv", as: OrtCreateEnv.self)
        createSession = try member(P.createSession, "CreateSession", as: OrtCreateSession.self)
        run = try member(P.run, "Run", as: OrtRun.self)
        createSessionOptions = try member(P.createSessionOptions, "CreateSessionOptions", as: OrtCreateSessionOptions.self)
        setSessionExecutionMode = try member(P.setSessionExecutionMode, "SetSessionExecutionMode", as: OrtSetOptionInt.self)
        enableCpuMemArena = try member(P.enableCpuMemArena, "EnableCpuMemArena", as: OrtSetOption.self)
        disableCpuMemArena = try member(P.disableCpuMemArena, "DisableCpuMemArena", as: OrtSetOption.self)
        setSessionGraphOptimizationLevel = try member(P.setSessionGraphOptimizationLevel,
                                                      "SetSessionGraphOptimizationLevel", as: OrtSetOptionInt.self)
        setIntraOpNumThreads = try member(P.setIntraOpNumThreads, "SetIntraOpNumThreads", as: OrtSetOptionInt.self)
        setInterOpNumThreads = try member(P.setInterOpNumThreads, "SetInterOpNumThreads", as: OrtSetOptionInt.self)
        sessionGetInputCount = try member(P.sessionGetInputCount, "SessionGetInputCount", as: OrtSessionGetCount.self)
        sessionGetOutputCount = try member(P.sessionGetOutputCount, "SessionGetOutputCount", as: OrtSessionGetCount.self)
        sessionGetInputName = try member(P.sessionGetInputName, "SessionGetInputName", as: OrtSessionGetName.self)
        sessionGetOutputName = try member(P.sessionGetOutputName, "SessionGetOutputName", as: OrtSessionGetName.self)
        createTensorWithDataAsOrtValue = try member(P.createTensorWithDataAsOrtValue, "CreateTensorWithDataAsOrtValue",
                                                    as: OrtCreateTensorWithData.self)
        isTensor = try member(P.isTensor, "IsTensor", as: OrtIsTensor.self)
        getTensorMutableData = try member(P.getTensorMutableData, "GetTensorMutableData", as: OrtGetTensorMutableData.self)
        getTensorElementType = try member(P.getTensorElementType, "GetTensorElementType", as: OrtGetTensorElementType.self)
        getDimensionsCount = try member(P.getDimensionsCount, "GetDimensionsCount", as: OrtGetDimensionsCount.self)
        getDimensions = try member(P.getDimensions, "GetDimensions", as: OrtGetDimensions.self)
        getTensorShapeElementCount = try member(P.getTensorShapeElementCount, "GetTensorShapeElementCount",
                                                as: OrtGetTensorShapeElementCount.self)
        getTensorTypeAndShape = try member(P.getTensorTypeAndShape, "GetTensorTypeAndShape", as: OrtGetTensorTypeAndShape.self)
        createCpuMemoryInfo = try member(P.createCpuMemoryInfo, "CreateCpuMemoryInfo", as: OrtCreateCpuMemoryInfo.self)
        allocatorFree = try member(P.allocatorFree, "AllocatorFree", as: OrtAllocatorFree.self)
        getAllocatorWithDefaultOptions = try member(P.getAllocatorWithDefaultOptions, "GetAllocatorWithDefaultOptions",
                                                    as: OrtGetAllocatorWithDefaultOptions.self)
        releaseEnv = try member(P.releaseEnv, "ReleaseEnv", as: OrtRelease.self)
        releaseStatus = try member(P.releaseStatus, "ReleaseStatus", as: OrtRelease.self)
        releaseMemoryInfo = try member(P.releaseMemoryInfo, "ReleaseMemoryInfo", as: OrtRelease.self)
        releaseSession = try member(P.releaseSession, "ReleaseSession", as: OrtRelease.self)
        releaseValue = try member(P.releaseValue, "ReleaseValue", as: OrtRelease.self)
        releaseTensorTypeAndShapeInfo = try member(P.releaseTensorTypeAndShapeInfo, "ReleaseTensorTypeAndShapeInfo",
                                                   as: OrtRelease.self)
        releaseSessionOptions = try member(P.releaseSessionOptions, "ReleaseSessionOptions", as: OrtRelease.self)
        sessionGetModelMetadata = try member(P.sessionGetModelMetadata, "SessionGetModelMetadata",
                                             as: OrtSessionGetModelMetadata.self)
        modelMetadataLookupCustomMetadataMap = try member(P.modelMetadataLookupCustomMetadataMap,
                                                          "ModelMetadataLookupCustomMetadataMap",
                                                          as: OrtLookupCustomMetadata.self)
        releaseModelMetadata = try member(P.releaseModelMetadata, "ReleaseModelMetadata", as: OrtRelease.self)
    }

    /// Turns a returned `OrtStatus*` into an error (nil status: success) and releases the status.
    /// `context` says what was being done and on which file; ONNX Runtime's message follows it.
    func check(_ status: OrtStatusResult, _ kind: ONNXRuntimeError.Kind = .runtime,
               _ context: @autoclosure () -> String) throws(ONNXRuntimeError) {
        guard let status else { return }
        let code = getErrorCode(status)
        let message = getErrorMessage(status).map { String(cString: $0) } ?? "no message"
        releaseStatus(status)
        throw ONNXRuntimeError(kind, "\(context()): \(message)", code: code)
    }

    /// Copies a string ONNX Runtime allocated with `allocator` and frees it with that allocator.
    func take(_ string: UnsafeMutablePointer<CChar>?, from allocator: UnsafeMutableRawPointer) -> String? {
        guard let string else { return nil }
        let copy = String(cString: string)
        // Freeing with the default allocator only fails for a null allocator; there is nothing to do if it did.
        if let status = allocatorFree(allocator, UnsafeMutableRawPointer(string)) { releaseStatus(status) }
        return copy
    }
}
