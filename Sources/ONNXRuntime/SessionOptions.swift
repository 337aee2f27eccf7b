/// How a session is set up. The defaults suit one session per page slot on a shared machine: one intra-op and one
/// inter-op thread (parallelism comes from the slots), no CPU memory arena (memory goes back between pages).
/// Execution is always sequential, with every graph optimization (`ORT_ENABLE_ALL`).
public struct SessionOptions: Sendable, Equatable {
    /// Threads ONNX Runtime may use inside one operator (1: the calling thread only; 0: its default, one per core).
    public var intraOpThreads = 1
    /// Threads for running independent operators at once; with sequential execution ONNX Runtime uses 1.
    public var interOpThreads = 1
    /// Whether the CPU allocator keeps freed blocks in an arena for reuse (faster, but a long-running process keeps
    /// its peak: ~1.4 GB measured with it on).
    public var cpuMemoryArena = false
    // Execution provider: a `cudaDevice: Int?` would go here, applied where OrtSessionOptionsHandle says
    // "Execution providers" (not offered yet).

    public init() {}
}
