/// An ONNX model loaded into ONNX Runtime, ready to run on float32 tensors.
///
/// Owns one `OrtSession`, released with `ReleaseSession` in `deinit` (before its runtime's environment, which it
/// keeps alive), and the CPU memory description its inputs are given with. Not `Sendable`: one session per page
/// slot, made and used on that slot's thread (each session has its own ONNX Runtime thread pools, sized by
/// `SessionOptions`).
public final class InferenceSession {
    /// The model's input names, in the model's order.
    public let inputNames: [String]
    /// The model's output names, in the model's order.
    public let outputNames: [String]
    /// The model file this session was made from.
    public let modelPath: String

    private let pointer: OpaquePointer
    private let memoryInfo: OrtMemoryInfoHandle
    private let runtime: ONNXRuntime

    /// Loads the model at `modelPath`. A missing, unreadable or malformed file is `.modelUnreadable`, with ONNX
    /// Runtime's message.
    public init(runtime: ONNXRuntime, modelPath: String, options: SessionOptions = SessionOptions())
        throws(ONNXRuntimeError) {
        let api = runtime.api
        let memoryInfo = try OrtMemoryInfoHandle(runtime: runtime, modelPath: modelPath)
        let sessionOptions = try OrtSessionOptionsHandle(runtime: runtime, options, modelPath: modelPath)
        var created: OpaquePointer?
        let status = withExtendedLifetime(sessionOptions) {
            api.createSession(runtime.environment, modelPath, sessionOptions.pointer, &created)
        }
        // The environment and the options were already accepted, so what CreateSession refuses is the file: its
        // codes for one vary (no such file 3, invalid protobuf 7, but an empty file is invalid argument 2), so all
        // are `.modelUnreadable`, with ONNX Runtime's code and message kept.
        try api.check(status, .modelUnreadable, "cannot load the model \(modelPath)")
        guard let created else { throw ONNXRuntimeError(.runtime, "\(modelPath): CreateSession returned no session") }
        let names: (inputs: [String], outputs: [String])
        do throws(ONNXRuntimeError) {
            names = try Self.names(of: created, runtime: runtime, modelPath: modelPath)
        } catch {
            // `self` is not complete, so deinit will not run: release the session here.
            api.releaseSession(created)
            throw error
        }
        self.pointer = created
        self.memoryInfo = memoryInfo
        self.runtime = runtime
        self.modelPath = modelPath
        self.inputNames = names.inputs
        self.outputNames = names.outputs
    }

    deinit { runtime.api.releaseSession(pointer) }

    /// The value of `key` in the model's custom metadata map (the recognizer's dictionary is "character"), or nil
    /// when the model has no such key or its metadata cannot be read.
    public func metadata(_ key: String) -> String? {
        let api = runtime.api
        var metadataPointer: OpaquePointer?
        guard (try? api.check(api.sessionGetModelMetadata(pointer, &metadataPointer), .runtime, "")) != nil,
              let metadataPointer else { return nil }
        let metadata = OrtModelMetadataHandle(runtime: runtime, metadataPointer)
        var value: UnsafeMutablePointer<CChar>?
        let status = api.modelMetadataLookupCustomMetadataMap(metadata.pointer, runtime.allocator, key, &value)
        guard (try? api.check(status, .runtime, "")) != nil else { return nil }
        return api.take(value, from: runtime.allocator)
    }

    /// Runs the model with `input` as its first input and returns its first output (float32 both).
    ///
    /// The input's shape must call for exactly as many values as it has (checked here, before ONNX Runtime reads
    /// the buffer); a shape the model does not accept is ONNX Runtime's error (`.runtime`), with its message.
    public func run(_ input: Tensor) throws(ONNXRuntimeError) -> Tensor {
        guard let count = input.elementCount else {
            throw ONNXRuntimeError(.runtime, "\(modelPath): the input shape \(input.shape) is not a valid shape")
        }
        guard count == input.values.count else {
            throw ONNXRuntimeError(.runtime, "\(modelPath): the input shape \(input.shape) calls for \(count) values, "
                                   + "but the tensor has \(input.values.count)")
        }
        guard count > 0 else {
            throw ONNXRuntimeError(.runtime, "\(modelPath): the input shape \(input.shape) has no values")
        }
        guard let inputName = inputNames.first, let outputName = outputNames.first else {
            throw ONNXRuntimeError(.runtime, "\(modelPath): the model has no input or no output")
        }
        let api = runtime.api
        let session = pointer
        let memory = memoryInfo.pointer
        // ONNX Runtime reads a non-null shape pointer even for a scalar (rank 0).
        let shape = input.shape.isEmpty ? [Int64(0)] : input.shape.map { Int64($0) }
        var values = input.values
        var output: OpaquePointer?
        let failure: ONNXRuntimeError? = values.withUnsafeMutableBytes { buffer in
            var value: OpaquePointer?
            let created = shape.withUnsafeBufferPointer { dimensions in
                api.createTensorWithDataAsOrtValue(memory, buffer.baseAddress!, buffer.count, dimensions.baseAddress!,
                                                   input.shape.count, OrtConstant.elementFloat, &value)
            }
            do throws(ONNXRuntimeError) {
                try api.check(created, .runtime, "\(modelPath): CreateTensorWithDataAsOrtValue \(input.shape)")
            } catch {
                return error
            }
            guard let value else { return ONNXRuntimeError(.runtime, "\(modelPath): no input value was made") }
            // The value wraps `buffer` without owning it: it is released at the end of this closure, after the run
            // and while the buffer is still valid.
            let inputValue = OrtValueHandle(runtime: runtime, value)
            let status = withExtendedLifetime(inputValue) {
                inputName.withCString { inputCName in
                    outputName.withCString { outputCName in
                        let inputNames: [UnsafePointer<CChar>?] = [inputCName]
                        let outputNames: [UnsafePointer<CChar>?] = [outputCName]
                        let inputs: [OpaquePointer?] = [inputValue.pointer]
                        return api.run(session, nil, inputNames, inputs, 1, outputNames, 1, &output)
                    }
                }
            }
            do throws(ONNXRuntimeError) {
                try api.check(status, .runtime, "\(modelPath): Run with input '\(inputName)' \(input.shape)")
            } catch {
                return error
            }
            return nil
        }
        if let failure {
            if let output { api.releaseValue(output) }
            throw failure
        }
        guard let output else { throw ONNXRuntimeError(.runtime, "\(modelPath): Run returned no output") }
        return try tensor(from: OrtValueHandle(runtime: runtime, output), name: outputName)
    }

    /// Copies a float32 tensor output out of ONNX Runtime's memory.
    private func tensor(from value: OrtValueHandle, name: String) throws(ONNXRuntimeError) -> Tensor {
        let api = runtime.api
        let context = "\(modelPath): output '\(name)'"
        var isTensor: Int32 = 0
        try api.check(api.isTensor(value.pointer, &isTensor), .runtime, "\(context): IsTensor")
        guard isTensor == 1 else { throw ONNXRuntimeError(.runtime, "\(context) is not a tensor") }
        var infoPointer: OpaquePointer?
        try api.check(api.getTensorTypeAndShape(value.pointer, &infoPointer), .runtime, "\(context): GetTensorTypeAndShape")
        guard let infoPointer else { throw ONNXRuntimeError(.runtime, "\(context): no type and shape") }
        let info = OrtTypeAndShapeHandle(runtime: runtime, infoPointer)
        var elementType: Int32 = 0
        try api.check(api.getTensorElementType(info.pointer, &elementType), .runtime, "\(context): GetTensorElementType")
        guard elementType == OrtConstant.elementFloat else {
            throw ONNXRuntimeError(.runtime, "\(context) has element type \(elementType), not float32 (1)")
        }
        var rank = 0
        try api.check(api.getDimensionsCount(info.pointer, &rank), .runtime, "\(context): GetDimensionsCount")
        // One slot at least, so that a scalar's (rank 0) buffer pointer is still a real one.
        var dimensions = [Int64](repeating: 0, count: max(rank, 1))
        try api.check(api.getDimensions(info.pointer, &dimensions, rank), .runtime, "\(context): GetDimensions")
        let shape = dimensions.prefix(rank).map { Int($0) }
        var count = 0
        try api.check(api.getTensorShapeElementCount(info.pointer, &count), .runtime,
                      "\(context): GetTensorShapeElementCount")
        guard Tensor(shape: shape, values: []).elementCount == count else {
            throw ONNXRuntimeError(.runtime, "\(context): shape \(shape) does not match its \(count) elements")
        }
        guard count > 0 else { return Tensor(shape: shape, values: []) }
        var data: UnsafeMutableRawPointer?
        try api.check(api.getTensorMutableData(value.pointer, &data), .runtime, "\(context): GetTensorMutableData")
        guard let data else { throw ONNXRuntimeError(.runtime, "\(context): no data") }
        let values = withExtendedLifetime(value) {
            Array(UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: count))
        }
        return Tensor(shape: shape, values: values)
    }

    /// The input and output names of a session just made.
    private static func names(of session: OpaquePointer, runtime: ONNXRuntime, modelPath: String)
        throws(ONNXRuntimeError) -> (inputs: [String], outputs: [String]) {
        let api = runtime.api
        func read(_ what: String, count: OrtSessionGetCount, name: OrtSessionGetName) throws(ONNXRuntimeError) -> [String] {
            var total = 0
            try api.check(count(session, &total), .runtime, "\(modelPath): reading the \(what) count")
            var names: [String] = []
            for index in 0..<total {
                var text: UnsafeMutablePointer<CChar>?
                try api.check(name(session, index, runtime.allocator, &text), .runtime,
                              "\(modelPath): reading \(what) name \(index)")
                names.append(api.take(text, from: runtime.allocator) ?? "")
            }
            return names
        }
        return (try read("input", count: api.sessionGetInputCount, name: api.sessionGetInputName),
                try read("output", count: api.sessionGetOutputCount, name: api.sessionGetOutputName))
    }
}
