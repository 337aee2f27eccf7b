import ONNXRuntime

/// Why running a model over a page's lines stopped: the runtime failed, or the page's own check (its time limit)
/// stopped it between two batches.
enum ModelRunError<E: Error>: Error {
    case runtime(ONNXRuntimeError)
    case stopped(E)
}
