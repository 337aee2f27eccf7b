import FarmCore
import Synchronization

/// Work spread over the cores with `NativeThread`s (no Dispatch: decision 0001).
enum Parallel {
    /// `body` applied to each of `items`, on up to one thread per core (this one among them), in `items`' order.
    static func map<T: Sendable, R: Sendable>(_ items: [T], _ body: @escaping @Sendable (T) -> R) -> [R] {
        let threads = min(items.count, NativeThread.processorCount)
        guard threads > 1 else { return items.map(body) }
        let state = Mutex<(next: Int, results: [R?])>((0, Array(repeating: nil, count: items.count)))
        let work: @Sendable () -> Void = {
            while true {
                let index = state.withLock { state -> Int in
                    defer { state.next += 1 }
                    return state.next
                }
                guard index < items.count else { return }
                let result = body(items[index])
                state.withLock { $0.results[index] = result }
            }
        }
        let helpers = (1..<threads).map { NativeThread.start(name: "export-render-\($0)", work) }
        work()
        for helper in helpers { helper.join() }
        return state.withLock { $0.results.map { $0! } }
    }
}
