/// Pages finished per second over the last second or so.
struct PageRate {
    private var times: [Int64] = []
    private var head = 0

    mutating func record(_ now: Int64) {
        times.append(now)
        if times.count > 4096 { times.removeFirst(times.count - 2048); head = 0 }
    }

    mutating func pagesPerSecond(now: Int64) -> Double {
        while head < times.count && now - times[head] > 1000 { head += 1 }
        if head > 1024 { times.removeFirst(head); head = 0 }
        return Double(times.count - head)
    }
}
