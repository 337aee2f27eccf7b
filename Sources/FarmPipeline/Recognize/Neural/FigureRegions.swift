import FarmCore

/// Figures: the detector finds text lines wherever there are letters, also a plot's tick labels and axis titles,
/// which the page's text (a PDF's text layer, Tesseract's reading) leaves out: Tesseract's page layout calls the
/// region an image and reads nothing in it. The neural path has no region classes, so a figure is told from the ink
/// the detected lines do not cover: a connected area of such ink at least `TesseractRecognizer.blankRegionRows`
/// text heights wide and high (what the Tesseract path takes for a picture rather than rows of text), dense (at least
/// `minDensity` ink: a picture, a colour map, not line art), holding more
/// ink than the text lines inside its box (a ruled table's grid holds less than its cells' text), and clear of the
/// image's edges (a photo's background, a scan's dark border touch them). Short lines (under
/// `LineLayout.proseWords` words) whose centre lies within `labelReach` text heights of such an area are the
/// figure's labels and are left out of the page's text, as Tesseract leaves them; a caption's lines are prose.
enum FigureRegions {
    /// Ink is counted on a grid of cells this many pixels wide and high.
    static let cell = 4
    /// A sample darker than this (the mean of its planes) is ink.
    static let inkLevel = 160
    /// How far from a figure's ink its labels reach (tick labels, axis titles), in text heights.
    static let labelReach = 2
    /// A figure's area is at least this fraction ink: a picture, a colour map, a halftone. Line art (a line plot's
    /// thin frame and curves) is not one: Tesseract reads text in it, and so does a PDF's text layer when the plot
    /// was drawn as vectors (the DocBank GT of `NNLLpaper_14` and `VNLM_arxiv_29` holds their plots' labels).
    static let minDensity = 0.15

    /// The indices of `lines` that are labels of a figure on `image`.
    static func labels(_ lines: [Line], on image: NeuralImage) -> [Int] {
        let heights = lines.map(\.box.height).sorted()
        guard !heights.isEmpty else { return [] }
        let textHeight = heights[heights.count / 2]
        let figures = regions(InkGrid(image, covered: lines.map(\.box)), textHeight: textHeight)
        guard !figures.isEmpty else { return [] }
        let reach = labelReach * textHeight
        return lines.indices.filter { index in
            let box = lines[index].box, x = box.x + box.width / 2, y = box.y + box.height / 2
            return lines[index].words.count < LineLayout.proseWords && figures.contains { figure in
                x >= figure.x - reach && x <= figure.maxX + reach && y >= figure.y - reach && y <= figure.maxY + reach
            }
        }
    }

    /// The boxes of the figures on the grid's page (see the type's comment).
    static func regions(_ grid: InkGrid, textHeight: Int) -> [Rect] {
        let least = TesseractRecognizer.blankRegionRows * textHeight
        return grid.uncoveredAreas().compactMap { area in
            let box = area.box
            guard box.width >= least, box.height >= least, Double(area.ink) >= minDensity * Double(box.width * box.height),
                  box.x > 0, box.y > 0, box.maxX < grid.pixelWidth, box.maxY < grid.pixelHeight,
                  area.ink > grid.coveredInk(in: box) else { return nil }
            return box
        }
    }
}

/// The ink of a page on a grid of `FigureRegions.cell`-pixel cells: how many ink samples each cell holds, and
/// whether a text line's box covers it.
struct InkGrid {
    let width: Int
    let height: Int
    let pixelWidth: Int
    let pixelHeight: Int
    let ink: [Int]
    let covered: [Bool]

    init(_ image: NeuralImage, covered boxes: [Rect]) {
        let cell = FigureRegions.cell
        pixelWidth = image.width
        pixelHeight = image.height
        width = (image.width + cell - 1) / cell
        height = (image.height + cell - 1) / cell
        var ink = [Int](repeating: 0, count: width * height)
        var covered = [Bool](repeating: false, count: width * height)
        let planes = image.planes.count, level = FigureRegions.inkLevel * planes
        for y in 0..<image.height {
            let row = (y / cell) * width, offset = y * image.width
            for x in 0..<image.width {
                var sum = 0
                for plane in 0..<planes { sum += Int(image.planes[plane][offset + x]) }
                if sum < level { ink[row + x / cell] += 1 }
            }
        }
        for box in boxes {
            for gy in max(0, box.y / cell)..<min(height, (box.maxY + cell - 1) / cell) {
                for gx in max(0, box.x / cell)..<min(width, (box.maxX + cell - 1) / cell) { covered[gy * width + gx] = true }
            }
        }
        self.ink = ink
        self.covered = covered
    }

    /// The 8-connected areas of cells with ink that no line covers: each one's box in pixels and its ink samples.
    func uncoveredAreas() -> [(box: Rect, ink: Int)] {
        var seen = [Bool](repeating: false, count: width * height)
        var areas: [(box: Rect, ink: Int)] = []
        for start in seen.indices where !seen[start] && ink[start] > 0 && !covered[start] {
            seen[start] = true
            var stack = [start], total = 0
            var minX = width, minY = height, maxX = 0, maxY = 0
            while let index = stack.popLast() {
                let x = index % width, y = index / width
                total += ink[index]
                minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
                for ny in max(0, y - 1)...min(height - 1, y + 1) {
                    for nx in max(0, x - 1)...min(width - 1, x + 1) {
                        let next = ny * width + nx
                        if !seen[next] && ink[next] > 0 && !covered[next] { seen[next] = true; stack.append(next) }
                    }
                }
            }
            let cell = FigureRegions.cell
            areas.append((Rect(x: minX * cell, y: minY * cell, width: (maxX - minX + 1) * cell, height: (maxY - minY + 1) * cell), total))
        }
        return areas
    }

    /// The ink samples in cells a line covers within `box` (in pixels).
    func coveredInk(in box: Rect) -> Int {
        let cell = FigureRegions.cell
        var total = 0
        for gy in max(0, box.y / cell)..<min(height, box.maxY / cell) {
            for gx in max(0, box.x / cell)..<min(width, box.maxX / cell) where covered[gy * width + gx] { total += ink[gy * width + gx] }
        }
        return total
    }
}
