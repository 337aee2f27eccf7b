import FarmCore
import FarmRuntime
import SQLite
import Synchronization

/// Checkpoints of the write-ahead log on a thread of their own, for a writer that must not wait for them (the
/// coordinator's loop; decision 0073).
///
/// SQLite's automatic checkpoint runs inside the commit that takes the log past 1,000 pages: that commit then
/// copies the log into the database and syncs both files, which on a busy disk takes tens to hundreds of
/// milliseconds, and the coordinator sends no JOB meanwhile. Here the commit only notes the log's size; past
/// `threshold` pages a thread with its own connection runs the same passive checkpoint (same trigger, same syncs,
/// so what a power cut can lose is unchanged), while the loop goes on committing to the log. Should that thread
/// fall behind or fail, the commit that takes the log past `fallback` pages checkpoints in place, as before.
public final class BackgroundCheckpointer: Sendable {
    private let requests = BlockingQueue<Int>()
    private let requested = Atomic<Bool>(false)
    private let thread: Mutex<NativeThread?> = Mutex(nil)
    /// Checkpoints run, and the longest one in milliseconds.
    private let tally = Mutex((count: 0, longestMilliseconds: 0.0))

    public let threshold: Int
    public let fallback: Int

    init(path: String, threshold: Int, fallback: Int) {
        self.threshold = threshold
        self.fallback = fallback
        let started = NativeThread.start(name: "checkpoint", stackSize: 1 << 20) { [self] in serve(path) }
        thread.withLock { $0 = started }
    }

    private func serve(_ path: String) {
        let connection: Connection
        do {
            connection = try Connection(path: path, mode: .readWrite)
            try connection.execute("PRAGMA synchronous=NORMAL")
        } catch {
            Log.error("cannot open the store for background checkpoints; the loop checkpoints past the fallback",
                      ["store": path, "error": "\(error)", "fallback_pages": String(fallback)])
            while requests.pop() != nil {}
            return
        }
        var failures = 0
        while requests.pop() != nil {
            requested.store(false, ordering: .relaxed)
            let start = Clock.monotonicNanoseconds
            do {
                try connection.checkpointPassive()
                let milliseconds = Clock.milliseconds(since: start)
                tally.withLock { $0 = ($0.count + 1, max($0.longestMilliseconds, milliseconds)) }
            } catch {
                failures += 1
                if failures <= 10 || failures % 100 == 0 {
                    Log.warning("background checkpoint failed; will try again",
                                ["store": path, "error": "\(error)", "failures": String(failures)])
                }
            }
        }
    }

    /// Called after each commit with the log's size: wakes the thread once per crossing of the threshold (a
    /// checkpoint already asked for is not asked again). True: checkpoint in place now (the fallback).
    func committed(logFrames: Int) -> Bool {
        if logFrames >= threshold && !requested.exchange(true, ordering: .relaxed) {
            requests.push(logFrames)
        }
        return logFrames >= fallback
    }

    /// Checkpoints done so far and the longest, in milliseconds.
    public var done: (count: Int, longestMilliseconds: Double) { tally.withLock { $0 } }

    /// Lets a checkpoint in progress finish and stops the thread.
    func finish() {
        requests.close()
        let running = thread.withLock { value in
            defer { value = nil }
            return value
        }
        running?.join()
    }
}

extension Store {
    /// Moves this connection's checkpoints to a `BackgroundCheckpointer` until `stopCheckpointsInBackground`.
    public func checkpointInBackground(threshold: Int = 1000, fallback: Int = 20_000) -> BackgroundCheckpointer {
        let checkpointer = BackgroundCheckpointer(path: path, threshold: threshold, fallback: fallback)
        connection.setWALHook { [checkpointer] frames in checkpointer.committed(logFrames: frames) }
        return checkpointer
    }

    /// Stops `checkpointer` and gives checkpoints back to SQLite's automatic checkpoint on this connection.
    public func stopCheckpointsInBackground(_ checkpointer: BackgroundCheckpointer) {
        connection.setWALHook(nil)
        checkpointer.finish()
    }
}
