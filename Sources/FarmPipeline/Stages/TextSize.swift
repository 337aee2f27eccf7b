import FarmCore
import Leptonica

/// Estimates the size of the text on a page from the heights of its dark connected components: the body text's
/// x-height (height of lowercase letters without ascenders) from the most common height, and the smallest text
/// size that many glyphs share (footnotes, table cells, subscripts), so scaling can keep it readable.
public enum TextSize {
    public struct Estimate: Sendable, Equatable {
        /// The most common glyph height, in pixels of the measured image.
        public let xHeight: Double
        /// How many components agreed with it (a handful means the estimate is weak).
        public let support: Int
        /// The smallest glyph height with real support on the page (at least `smallShare` of the glyphs around
        /// it): the x-height of its smallest text, at most `xHeight`.
        public let smallXHeight: Double

        public init(xHeight: Double, support: Int, smallXHeight: Double? = nil) {
            self.xHeight = xHeight
            self.support = support
            self.smallXHeight = min(smallXHeight ?? xHeight, xHeight)
        }
    }

    /// The share of all glyph-like components within ±1 px of a height for it to count as a text size of its
    /// own, not punctuation or noise.
    static let smallShare = 0.08
    /// Small text is at least this fraction of the body text's size.
    static let smallestShare = 1.0 / 3

    /// Measures the x-height of `image` (any depth). Nil when there is too little text.
    public static func estimate(_ image: Pix) throws(LeptonicaError) -> Estimate? {
        // Work on a copy at most ~1200 px wide; heights are scaled back.
        let factor = min(1, 1200 / Double(max(image.width, 1)))
        let small = factor < 1 ? try image.grayscale().resampled(by: factor) : try image.grayscale()
        // Sauvola's local threshold keeps faint and thin strokes (thermal receipts) whole, where a fixed threshold
        // breaks them into specks whose height would be taken for the text's.
        let binary = try small.sauvolaBinarized(window: 8, factor: 0.34).grayPixels()
        let heights = componentHeights(binary)
        guard let (height, support) = mode(heights, minimum: 4, maximum: 120), support >= 20 else { return nil }
        // Small text is looked for down to a third of the body's size: smaller specks (dots, commas, thermal-print
        // noise) are common enough to pass for text, and would hold every reduction back.
        let smallHeight = smallest(heights, minimum: max(4, Int(height * smallestShare)), below: height, share: smallShare) ?? height
        return Estimate(xHeight: height / factor, support: support, smallXHeight: smallHeight / factor)
    }

    /// Heights of the bounding boxes of 8-connected dark components that look like glyphs.
    static func componentHeights(_ binary: GrayPixels) -> [Int] {
        let w = binary.width, h = binary.height
        var labels = [Int32](repeating: 0, count: w * h)
        var heights: [Int] = []
        var stack: [Int] = []
        var next: Int32 = 0
        // 1-bpp images come back from grayPixels as 0 (white) and 1 (black) expanded to 255/0 by pixConvertTo8.
        binary.data.withUnsafeBufferPointer { pixels in
            for start in 0..<(w * h) where pixels[start] == 0 && labels[start] == 0 {
                next += 1
                var minX = Int.max, maxX = Int.min, minY = Int.max, maxY = Int.min, count = 0
                stack.append(start)
                labels[start] = next
                while let index = stack.popLast() {
                    let x = index % w, y = index / w
                    count += 1
                    minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
                    for dy in -1...1 {
                        let ny = y + dy
                        if ny < 0 || ny >= h { continue }
                        for dx in -1...1 {
                            let nx = x + dx
                            if nx < 0 || nx >= w || (dx == 0 && dy == 0) { continue }
                            let neighbor = ny * w + nx
                            if pixels[neighbor] == 0 && labels[neighbor] == 0 {
                                labels[neighbor] = next
                                stack.append(neighbor)
                            }
                        }
                    }
                }
                let cw = maxX - minX + 1, ch = maxY - minY + 1
                // Glyph-like: not a speck, not a line or a picture, reasonably filled.
                if ch >= 4 && cw >= 2 && cw <= ch * 3 && ch <= cw * 4 && count * 10 >= cw * ch {
                    heights.append(ch)
                }
            }
        }
        return heights
    }

    /// The smallest value under `limit` (smoothed over ±1) that at least `share` of all the values in range fall
    /// within ±1 of, and that is a peak of the smoothed histogram (a size of its own, not the foot of a larger one).
    static func smallest(_ values: [Int], minimum: Int, below limit: Double, share: Double) -> Double? {
        let top = Int(limit.rounded(.down))
        guard top > minimum else { return nil }
        var histogram = [Int](repeating: 0, count: top + 3)
        var total = 0
        for value in values where value >= minimum { total += 1; if value <= top + 1 { histogram[value] += 1 } }
        guard total > 0 else { return nil }
        func smoothed(_ v: Int) -> Int { histogram[v - 1] + histogram[v] + (v + 1 < histogram.count ? histogram[v + 1] : 0) }
        for value in minimum..<top {
            let count = smoothed(value)
            guard Double(count) >= share * Double(total) else { continue }
            if count >= smoothed(value + 1) && (value == minimum || count >= smoothed(value - 1)) { return Double(value) }
        }
        return nil
    }

    /// The most frequent value (smoothed over ±1), with how many samples fall within ±1 of it.
    static func mode(_ values: [Int], minimum: Int, maximum: Int) -> (Double, Int)? {
        var histogram = [Int](repeating: 0, count: maximum + 2)
        for value in values where value >= minimum && value <= maximum { histogram[value] += 1 }
        var best = 0, bestCount = 0
        for value in minimum...maximum {
            let count = histogram[value - 1] + histogram[value] + histogram[value + 1]
            if count > bestCount { (best, bestCount) = (value, count) }
        }
        guard bestCount > 0 else { return nil }
        // A weighted mean around the peak gives a sub-pixel height.
        let weights = (best - 1...best + 1).map { Double(histogram[$0]) }
        let mean = (Double(best - 1) * weights[0] + Double(best) * weights[1] + Double(best + 1) * weights[2]) / weights.reduce(0, +)
        return (mean, bestCount)
    }
}
