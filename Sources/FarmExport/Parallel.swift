import FarmCore
import Synchronization
import FarmRuntime

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

    /// `body` applied to each of `items` on up to one thread per core, none of them this one, which goes on with
    /// its own work meanwhile (export writes the pages rendered before while the next are rendered); the results,
    /// in `items`' order, when the work is joined (`Started.join`).
    static func start<T: Sendable, R: Sendable>(_ items: [T], _ body: @escaping @Sendable (T) -> R) -> Started<R> {
        let results = Started<R>.Results(count: items.count)
        let threads = min(items.count, NativeThread.processorCount)
        let helpers = (0..<threads).map { number in
            NativeThread.start(name: "export-render-\(number + 1)") {
                while let index = results.claim(below: items.count) {
                    results.store(body(items[index]), at: index)
                }
            }
        }
        return Started(results: results, threads: helpers)
    }
}

/// Work begun on other threads (`Parallel.start`).
final class Started<R: Sendable> {
    final class Results: Sendable {
        private let state: Mutex<(next: Int, results: [R?])>

        init(count: Int) { state = Mutex((0, Array(repeating: nil, count: count))) }

        /// The next item to work on, if any is left.
        func claim(below count: Int) -> Int? {
            state.withLock { state in
                guard state.next < count else { return nil }
                defer { state.next += 1 }
                return state.next
            }
        }

        func store(_ result: R, at index: Int) { state.withLock { $0.results[index] = result } }

        var all: [R] { state.withLock { $0.results.map { $0! } } }
    }

    private let results: Results
    private var threads: [NativeThread]

    fileprivate init(results: Results, threads: [NativeThread]) {
        self.results = results
        self.threads = threads
    }

    /// Waits for the work to end; its results, in the items' order.
    func join() -> [R] {
        for thread in threads { thread.join() }
        threads = []
        return results.all
    }

    deinit {
        for thread in threads { thread.join() }
    }
}
