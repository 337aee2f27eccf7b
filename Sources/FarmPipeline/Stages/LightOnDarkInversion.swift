import FarmCore
import Leptonica

/// Light text on dark ground (slides, reverse-video bands, dark table headers) turned into dark text on light
/// ground, region by region, before enhance flattens the page: flattening takes a dark area wider than its window
/// for the paper and divides it to white, light letters and all.
///
/// A region is where dark pixels fill most of a small square around each point (ordinary text fills a quarter of
/// it at most, even bold), large enough to hold a line of text, and whose letters stand out lighter than its
/// ground: a dark area without any is left as it is, one that is half light is paper, and dark text on a gray
/// box is already dark on light.
enum LightOnDarkInversion {
    /// Share of dark pixels in the square above which a point is in a dark region.
    static let density = 0.6
    /// Pixels lighter than the ground a region must hold (its letters), as a share of its area: none means no text
    /// to save, and more than half means it is paper, not dark ground.
    static let lightShare = 0.02...0.5
    /// Gray levels below `dark` are dark ground.
    static let dark: UInt8 = 128
    /// How far a letter's gray stands out from the ground's.
    static let contrast = 60
    /// The share of a region's edge pixels that must be ground.
    static let framedShare = 0.9
    /// The longer side of the copy the regions are looked for on.
    static let detectionSide = 1000

    /// `gray` (8-bit, owned by the caller and changed in place) with its light-on-dark regions inverted; returns
    /// the boxes inverted.
    static func invert(_ gray: Pix) throws(LeptonicaError) -> [Box] {
        let width = gray.width, height = gray.height
        let half = max(5, min(width, height) / 160)
        guard min(width, height) > 4 * half else { return [] }
        // Found on a copy at most `detectionSide` pixels on its longer side (the regions are large, and the mean
        // over a window costs the page's size), the boxes scaled back.
        let reduction = min(1, Double(detectionSide) / Double(max(width, height)))
        let reducedHalf = max(2, Int((Double(half) * reduction).rounded()))
        let seen = reduction < 1 ? try gray.resampled(by: reduction) : gray
        var candidates = try seen.denseDarkBoxes(halfWindow: reducedHalf, density: density)
            .map { Box(x: Int(Double($0.x) / reduction), y: Int(Double($0.y) / reduction),
                       width: Int((Double($0.width) / reduction).rounded(.up)), height: Int((Double($0.height) / reduction).rounded(.up))) }
            .filter { $0.height >= half && $0.width >= 4 * half }
            // The mean spreads a region's edge over half a window: grown back by that much.
            .map { Box(x: max(0, $0.x - half), y: max(0, $0.y - half),
                       width: min(width, $0.x + $0.width + half) - max(0, $0.x - half),
                       height: min(height, $0.y + $0.height + half) - max(0, $0.y - half)) }
        guard !candidates.isEmpty else { return [] }
        candidates = merged(candidates)
        var inverted: [Box] = []
        gray.withGrayBytes { pixels, bytesPerRow in
            for candidate in candidates {
                let box = tightened(candidate, pixels, bytesPerRow)
                guard box.width >= 4 * half, box.height >= half else { continue }
                // The ground is the region's median; its letters are what stands out from it. Dark text on a gray
                // box (a diagram's boxes, a shaded cell) stands out darker, and is left alone.
                var histogram = [Int](repeating: 0, count: 256)
                for y in box.y..<(box.y + box.height) {
                    let row = y * bytesPerRow
                    for x in box.x..<(box.x + box.width) { histogram[Int(pixels[row + (x ^ 3)])] += 1 }
                }
                let area = box.width * box.height
                var seen = 0, ground = 0
                while ground < 255 && seen + histogram[ground] < area / 2 { seen += histogram[ground]; ground += 1 }
                let lighter = histogram[min(255, ground + contrast)...].reduce(0, +)
                let darker = ground - contrast >= 0 ? histogram[...(ground - contrast)].reduce(0, +) : 0
                guard lightShare.contains(Double(lighter) / Double(area)), darker * 4 < lighter else { continue }
                // The ground frames its letters: a band's edges are ground all round. A line of heavy bold print
                // is dense too, but the paper between its letters runs out to its edges.
                var edge = 0, edgeGround = 0
                func visit(_ x: Int, _ y: Int) {
                    edge += 1
                    if Int(pixels[y * bytesPerRow + (x ^ 3)]) < ground + contrast { edgeGround += 1 }
                }
                for x in box.x..<(box.x + box.width) { visit(x, box.y); visit(x, box.y + box.height - 1) }
                for y in box.y..<(box.y + box.height) { visit(box.x, y); visit(box.x + box.width - 1, y) }
                guard Double(edgeGround) >= framedShare * Double(edge) else { continue }
                for y in box.y..<(box.y + box.height) {
                    let row = y * bytesPerRow
                    for x in box.x..<(box.x + box.width) { pixels[row + (x ^ 3)] = 255 - pixels[row + (x ^ 3)] }
                }
                inverted.append(box)
            }
        }
        return inverted
    }

    /// A copy of the 8-bit `image` with `boxes` inverted (the regions `invert` turned, turned back).
    static func turnedBack(_ image: Pix, _ boxes: [Box]) throws(LeptonicaError) -> Pix {
        let copy = try image.copy()
        copy.withGrayBytes { pixels, bytesPerRow in
            for box in boxes {
                for y in box.y..<min(copy.height, box.y + box.height) {
                    let row = y * bytesPerRow
                    for x in box.x..<min(copy.width, box.x + box.width) { pixels[row + (x ^ 3)] = 255 - pixels[row + (x ^ 3)] }
                }
            }
        }
        return copy
    }

    /// Boxes that overlap joined into one, until none do (so no pixel is inverted twice).
    static func merged(_ boxes: [Box]) -> [Box] {
        var boxes = boxes
        var joined = true
        while joined {
            joined = false
            outer: for i in boxes.indices {
                for j in boxes.indices where j > i && overlap(boxes[i], boxes[j]) {
                    let a = boxes[i], b = boxes[j]
                    let x0 = min(a.x, b.x), y0 = min(a.y, b.y)
                    boxes[i] = Box(x: x0, y: y0, width: max(a.x + a.width, b.x + b.width) - x0,
                                   height: max(a.y + a.height, b.y + b.height) - y0)
                    boxes.remove(at: j)
                    joined = true
                    break outer
                }
            }
        }
        return boxes
    }

    static func overlap(_ a: Box, _ b: Box) -> Bool {
        a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
    }

    /// `box` with its edge rows and columns that are mostly light taken off: the grown box's margin beyond the dark
    /// region, which must not be inverted into a dark frame.
    static func tightened(_ box: Box, _ pixels: UnsafeMutableBufferPointer<UInt8>, _ bytesPerRow: Int) -> Box {
        func darkShareOfRow(_ y: Int, _ x0: Int, _ x1: Int) -> Double {
            guard x1 > x0 else { return 0 }
            var dark = 0
            for x in x0..<x1 where pixels[y * bytesPerRow + (x ^ 3)] < Self.dark { dark += 1 }
            return Double(dark) / Double(x1 - x0)
        }
        func darkShareOfColumn(_ x: Int, _ y0: Int, _ y1: Int) -> Double {
            guard y1 > y0 else { return 0 }
            var dark = 0
            for y in y0..<y1 where pixels[y * bytesPerRow + (x ^ 3)] < Self.dark { dark += 1 }
            return Double(dark) / Double(y1 - y0)
        }
        var x0 = box.x, x1 = box.x + box.width, y0 = box.y, y1 = box.y + box.height
        while y0 < y1 && darkShareOfRow(y0, x0, x1) < 0.5 { y0 += 1 }
        while y1 > y0 && darkShareOfRow(y1 - 1, x0, x1) < 0.5 { y1 -= 1 }
        while x0 < x1 && darkShareOfColumn(x0, y0, y1) < 0.5 { x0 += 1 }
        while x1 > x0 && darkShareOfColumn(x1 - 1, y0, y1) < 0.5 { x1 -= 1 }
        return Box(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}
