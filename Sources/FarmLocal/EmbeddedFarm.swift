import FarmCoordinator
import FarmCore
import FarmRuntime
import FarmStore
import Synchronization
import ZeroMQ

/// Why the embedded coordinator could not start.
public struct EmbeddedFarmError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A coordinator on its own thread in this process (`ocrfarm run`), with its own store connection.
public final class EmbeddedFarm: Sendable {
    /// The endpoint the coordinator bound (with the port the system chose for `:*`).
    public let endpoint: String
    private final class Shared: Sendable {
        let stop = Atomic<Bool>(false)
        let failure = Mutex<String?>(nil)
        let coordinator = Mutex<CoordinatorHandle?>(nil)
    }

    /// Lets the caller's thread read the coordinator's counters (which are themselves behind a lock).
    private final class CoordinatorHandle: @unchecked Sendable {
        // Thread-safety: only `snapshot` is used from other threads, and it is guarded by the coordinator's mutex.
        let coordinator: Coordinator
        init(_ coordinator: Coordinator) { self.coordinator = coordinator }
        var snapshot: CoordinatorCounters { coordinator.snapshot }
    }
    private let shared = Shared()
    private let thread: NativeThread

    /// Starts the coordinator and returns once it is bound (or throws why it could not start).
    public init(storePath: String, context: Context, configuration: CoordinatorConfiguration) throws(EmbeddedFarmError) {
        let started = BlockingQueue<Result<String, EmbeddedFarmError>>()
        let shared = self.shared
        thread = NativeThread.start(name: "coordinator") {
            do {
                let store = try Store(path: storePath)
                let coordinator = try Coordinator(store: store, context: context, configuration: configuration)
                shared.coordinator.withLock { $0 = CoordinatorHandle(coordinator) }
                started.push(.success(coordinator.endpoint))
                try coordinator.run(shouldStop: { shared.stop.load(ordering: .relaxed) })
            } catch {
                shared.failure.withLock { $0 = "\(error)" }
                started.push(.failure(EmbeddedFarmError("cannot start the coordinator: \(error)")))
            }
        }
        switch started.pop() {
        case .success(let endpoint): self.endpoint = endpoint
        case .failure(let failure): thread.join(); throw failure
        case nil: thread.join(); throw EmbeddedFarmError("the coordinator did not start")
        }
    }

    public var counters: CoordinatorCounters { shared.coordinator.withLock { $0?.snapshot } ?? CoordinatorCounters() }
    /// The coordinator's loop ended with an error (after it had started).
    public var failed: Bool { shared.failure.withLock { $0 != nil } }
    public var failure: String? { shared.failure.withLock { $0 } }

    /// Asks the coordinator to stop (it flushes and says BYE) and waits for its thread. Calling it again does nothing.
    public func stop() {
        guard !shared.stop.exchange(true, ordering: .acquiringAndReleasing) else { return }
        thread.join()
    }
}
