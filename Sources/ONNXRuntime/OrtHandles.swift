// The short-lived ONNX Runtime objects a session uses, one owning class each. Each keeps its runtime (and so the
// environment and the table) alive, is released with ONNX Runtime's own Release function in `deinit`, and is used
// only on the thread of the session that made it.

/// An `OrtSessionOptions`, released with `ReleaseSessionOptions`. Lives while a session is being created.
final class OrtSessionOptionsHandle {
    let pointer: OpaquePointer
    private let runtime: ONNXRuntime

    init(runtime: ONNXRuntime, _ options: SessionOptions, modelPath: String) throws(ONNXRuntimeError) {
        // ONNX Runtime takes a negative thread count without complaint; 0 is its own default (one per core).
        guard options.intraOpThreads >= 0, options.interOpThreads >= 0 else {
            throw ONNXRuntimeError(.runtime, "\(modelPath): thread counts must be 0 (ONNX Runtime's default) or more, "
                                   + "not \(options.intraOpThreads) intra-op and \(options.interOpThreads) inter-op")
        }
        let api = runtime.api
        var pointer: OpaquePointer?
        try api.check(api.createSessionOptions(&pointer), .runtime, "\(modelPath): CreateSessionOptions")
        guard let pointer else { throw ONNXRuntimeError(.runtime, "\(modelPath): CreateSessionOptions returned nothing") }
        self.pointer = pointer
        self.runtime = runtime
        // From here a throw releases the options through deinit.
        try api.check(api.setSessionExecutionMode(pointer, OrtConstant.sequential), .runtime,
                      "\(modelPath): SetSessionExecutionMode")
        try api.check(api.setSessionGraphOptimizationLevel(pointer, OrtConstant.enableAll), .runtime,
                      "\(modelPath): SetSessionGraphOptimizationLevel")
        try api.check(api.setIntraOpNumThreads(pointer, Int32(clamping: options.intraOpThreads)), .runtime,
                      "\(modelPath): SetIntraOpNumThreads(\(options.intraOpThreads))")
        try api.check(api.setInterOpNumThreads(pointer, Int32(clamping: options.interOpThreads)), .runtime,
                      "\(modelPath): SetInterOpNumThreads(\(options.interOpThreads))")
        // The arena keeps freed blocks for reuse; off, a long-running worker's memory goes back between pages.
        try api.check(options.cpuMemoryArena ? api.enableCpuMemArena(pointer) : api.disableCpuMemArena(pointer), .runtime,
                      "\(modelPath): \(options.cpuMemoryArena ? "EnableCpuMemArena" : "DisableCpuMemArena")")
        // Execution providers: a CUDA provider would be appended here, before CreateSession, with
        // SessionOptionsAppendExecutionProvider_CUDA when `options` asks for it (not offered yet: the CPU wheel has
        // no CUDA provider). Providers are tried in the order appended; the CPU provider is always the fallback.
    }

    deinit { runtime.api.releaseSessionOptions(pointer) }
}

/// An `OrtMemoryInfo` describing plain CPU memory (where a run's input buffer lives), released with
/// `ReleaseMemoryInfo`. Owned by one session.
final class OrtMemoryInfoHandle {
    let pointer: OpaquePointer
    private let runtime: ONNXRuntime

    init(runtime: ONNXRuntime, modelPath: String) throws(ONNXRuntimeError) {
        let api = runtime.api
        var pointer: OpaquePointer?
        try api.check(api.createCpuMemoryInfo(OrtConstant.deviceAllocator, OrtConstant.memTypeDefault, &pointer), .runtime,
                      "\(modelPath): CreateCpuMemoryInfo")
        guard let pointer else { throw ONNXRuntimeError(.runtime, "\(modelPath): CreateCpuMemoryInfo returned nothing") }
        self.pointer = pointer
        self.runtime = runtime
    }

    deinit { runtime.api.releaseMemoryInfo(pointer) }
}

/// An `OrtValue` (a run's input wrapping Swift memory, or an output ONNX Runtime allocated), released with
/// `ReleaseValue`. An input value does not own its buffer: it must be released before the buffer goes.
final class OrtValueHandle {
    let pointer: OpaquePointer
    private let runtime: ONNXRuntime

    init(runtime: ONNXRuntime, _ pointer: OpaquePointer) {
        self.pointer = pointer
        self.runtime = runtime
    }

    deinit { runtime.api.releaseValue(pointer) }
}

/// An `OrtTensorTypeAndShapeInfo` read from a value, released with `ReleaseTensorTypeAndShapeInfo`.
final class OrtTypeAndShapeHandle {
    let pointer: OpaquePointer
    private let runtime: ONNXRuntime

    init(runtime: ONNXRuntime, _ pointer: OpaquePointer) {
        self.pointer = pointer
        self.runtime = runtime
    }

    deinit { runtime.api.releaseTensorTypeAndShapeInfo(pointer) }
}

/// An `OrtModelMetadata` read from a session, released with `ReleaseModelMetadata`.
final class OrtModelMetadataHandle {
    let pointer: OpaquePointer
    private let runtime: ONNXRuntime

    init(runtime: ONNXRuntime, _ pointer: OpaquePointer) {
        self.pointer = pointer
        self.runtime = runtime
    }

    deinit { runtime.api.releaseModelMetadata(pointer) }
}
