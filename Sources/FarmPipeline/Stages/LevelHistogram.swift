/// How many samples of an 8-bit image have each gray level, for the levels at given shares of them (the paper's
/// and the print's levels of a page or a line).
struct LevelHistogram {
    private(set) var counts = [Int](repeating: 0, count: 256)
    private(set) var samples = 0

    init() {}

    init(_ levels: [UInt8]) {
        for level in levels { add(level) }
    }

    @inline(__always)
    mutating func add(_ level: UInt8) {
        counts[Int(level)] += 1
        samples += 1
    }

    /// The lowest level at or below which at least `fraction` of the samples lie (255 when there are none).
    func percentile(_ fraction: Double) -> Int {
        var seen = 0
        for level in 0..<256 {
            seen += counts[level]
            if Double(seen) >= fraction * Double(samples) { return level }
        }
        return 255
    }
}
