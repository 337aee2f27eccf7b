#if canImport(Glibc)
import Glibc
#endif
import FarmCore

/// A dedicated OS thread, for work that blocks for long (OCR, sockets) and must not sit on Swift's cooperative
/// pool. Non-Sendable state (engines, sockets) is created inside `body` and never leaves it.
public final class NativeThread: @unchecked Sendable {
    // Thread-safety: `thread` is written once in `start` before any other thread can see this object, and read
    // only by `join`, which the creator calls.
    private var thread = pthread_t()
    private var joined = false

    private final class Body: @unchecked Sendable {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    private init() {}

    /// Starts `body` on a new thread; call `join()` to wait for it.
    public static func start(name: String, stackSize: Int = 8 << 20, _ body: @escaping @Sendable () -> Void) -> NativeThread {
        let thread = NativeThread()
        thread.launch(name: name, stackSize: stackSize, detached: false, body)
        return thread
    }

    /// Starts `body` on a thread nobody joins.
    public static func detach(name: String, _ body: @escaping @Sendable () -> Void) {
        NativeThread().launch(name: name, stackSize: 1 << 20, detached: true, body)
    }

    private func launch(name: String, stackSize: Int, detached: Bool, _ body: @escaping @Sendable () -> Void) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, stackSize)
        if detached { pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
        let box = Unmanaged.passRetained(Body(name: name, run: body)).toOpaque()
        let rc = pthread_create(&thread, &attributes, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }

    /// Waits for the thread to finish.
    public func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }

    /// Lets the thread run on with nobody waiting for it: its resources go back to the system when it ends
    /// (a worker slot given up while stuck in a page that cannot be interrupted).
    public func detach() {
        guard !joined else { return }
        joined = true
        pthread_detach(thread)
    }

    /// The number of CPUs online.
    public static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}
