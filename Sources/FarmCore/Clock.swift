#if canImport(Glibc)
import Glibc
#endif

/// Time sources. Monotonic time for durations and deadlines; wall time (Unix seconds) for records.
public enum Clock {
    /// Monotonic nanoseconds since an arbitrary start.
    public static var monotonicNanoseconds: UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Monotonic milliseconds, for deadlines and timeouts.
    public static var monotonicMilliseconds: Int64 { Int64(monotonicNanoseconds / 1_000_000) }

    /// Wall-clock time in Unix seconds with a fractional part.
    public static var now: Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Milliseconds elapsed since `start` (a `monotonicNanoseconds` reading).
    public static func milliseconds(since start: UInt64) -> Double {
        Double(monotonicNanoseconds &- start) / 1e6
    }

    /// ISO 8601 UTC text of a Unix time, e.g. "2026-11-29T12:30:05.123Z".
    public static func iso8601(_ seconds: Double) -> String {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        let millis = Int((seconds - seconds.rounded(.down)) * 1000)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }

    /// Sleeps the calling thread.
    public static func sleep(milliseconds: Int) {
        var request = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

/// Where the coordinator and the worker read the time. Production passes `SystemTime`; tests pass a clock they
/// move by hand, so lease expiry and heartbeat loss can be tested without waiting for them.
public protocol TimeSource: Sendable {
    /// Monotonic milliseconds, for deadlines and timeouts.
    var monotonicMilliseconds: Int64 { get }
    /// Wall-clock time in Unix seconds, for records.
    var now: Double { get }
    /// Waits this long (a driven clock moves on instead of waiting).
    func sleep(milliseconds: Int)
}

/// The system's clocks (`Clock`).
public struct SystemTime: TimeSource {
    public init() {}
    public var monotonicMilliseconds: Int64 { Clock.monotonicMilliseconds }
    public var now: Double { Clock.now }
    public func sleep(milliseconds: Int) { Clock.sleep(milliseconds: milliseconds) }
}
