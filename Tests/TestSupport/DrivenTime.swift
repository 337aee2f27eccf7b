import FarmCore
import Synchronization

/// A clock the test moves by hand: the coordinator's and worker's deadlines (heartbeats, liveness, leases, the
/// store's backoff) come due when the test says so, not after real waiting. `sleep` moves the clock on.
public final class DrivenTime: TimeSource {
    private struct Reading { var monotonic: Int64; var wall: Double }
    private let reading: Mutex<Reading>

    /// Starts at the real wall time (stores compare it with times they wrote themselves) and monotonic 1,000,000 ms.
    public init(wall: Double = Clock.now) {
        reading = Mutex(Reading(monotonic: 1_000_000, wall: wall))
    }

    public var monotonicMilliseconds: Int64 { reading.withLock { $0.monotonic } }
    public var now: Double { reading.withLock { $0.wall } }
    public func sleep(milliseconds: Int) { advance(milliseconds: milliseconds) }

    /// Moves both clocks on.
    public func advance(milliseconds: Int) {
        reading.withLock {
            $0.monotonic += Int64(milliseconds)
            $0.wall += Double(milliseconds) / 1000
        }
    }

    public func advance(seconds: Double) { advance(milliseconds: Int((seconds * 1000).rounded())) }
}
