/// The order a person reads the text regions of a page in, from their boxes alone: columns left to right, each
/// top to bottom, with full-width regions (titles, footers, a paragraph across both columns) in between.
///
/// A recursive XY cut that prefers columns. A group of regions is first cut at vertical gutters (a strip of
/// the page no region crosses, any gap between paragraphs will do, as ragged lines leave narrow gutters) into columns, read left to right. When no gutter
/// runs through the whole group, it is cut at horizontal gaps into bands, and adjacent bands are merged as long
/// as their union still has a gutter, so that two columns whose paragraph breaks happen to line up stay two
/// columns rather than being read across. Regions that overlap both ways keep the engine's order.
///
/// Two neighbouring columns whose lines make rows (`RowLayout`: a receipt's item names beside their prices) are
/// read row by row instead, line by line from both.
public enum ReadingOrder {
    /// One line of a region: its box and how many words it holds.
    public struct LineShape: Sendable, Equatable {
        public var box: Rect
        public var words: Int
        public init(box: Rect, words: Int) {
            self.box = box
            self.words = words
        }
    }

    /// A run of lines read together, as (region, line) indices: a whole region's lines, or the lines of two
    /// columns that make rows, row by row.
    public typealias Part = [(region: Int, line: Int)]

    /// The indices of `boxes` in reading order. Specks (regions smaller than two `lineHeight`s both ways: a stray
    /// mark, a bullet, a page number) take no part in finding columns, since one speck in a margin would make a
    /// column of its own; they come last, in the order given.
    public static func order(_ boxes: [Rect], lineHeight: Int) -> [Int] {
        order(boxes, lines: boxes.map { _ in [] }, lineHeight: lineHeight).compactMap { $0.first?.region }
    }

    /// The regions of `boxes` (each with its `lines`) in reading order, as parts: each region whole, except where
    /// two neighbouring columns make rows, whose lines make one part, read row by row.
    public static func order(_ boxes: [Rect], lines: [[LineShape]], lineHeight: Int) -> [Part] {
        let line = max(1, lineHeight)
        let isSpeck = boxes.map { $0.width < 2 * line && $0.height < 2 * line }
        let regions = boxes.indices.filter { !isSpeck[$0] }
        let layout = Layout(boxes: boxes, lines: lines, minimumGutter: max(2, line / 8))
        return order(regions, layout) + boxes.indices.filter { isSpeck[$0] }.map { layout.whole($0) }
    }

    /// What ordering looks at: the regions' boxes and lines, and the narrowest gap that makes a gutter.
    private struct Layout {
        let boxes: [Rect]
        let lines: [[LineShape]]
        let minimumGutter: Int

        /// A region read whole (a region without lines still takes its place).
        func whole(_ region: Int) -> Part {
            lines[region].isEmpty ? [(region, -1)] : lines[region].indices.map { (region, $0) }
        }
    }

    private static func order(_ items: [Int], _ layout: Layout) -> [Part] {
        let boxes = layout.boxes, minimumGutter = layout.minimumGutter
        guard items.count > 1 else { return items.map { layout.whole($0) } }
        let columns = split(items, boxes, vertical: true, minimumGap: minimumGutter)
        if columns.count > 1 {
            var parts: [Part] = []
            var next = 0
            while next < columns.count {
                if next + 1 < columns.count, let rows = rows(columns[next], columns[next + 1], layout) {
                    parts.append(rows)
                    next += 2
                } else {
                    parts += order(columns[next], layout)
                    next += 1
                }
            }
            return parts
        }
        let bands = split(items, boxes, vertical: false, minimumGap: 1)
        guard bands.count > 1 else { return items.map { layout.whole($0) } }
        // Merge neighbouring bands while they still form columns together.
        var groups: [[Int]] = []
        for band in bands {
            if let last = groups.last, split(last + band, boxes, vertical: true, minimumGap: minimumGutter).count > 1,
               split(last, boxes, vertical: true, minimumGap: minimumGutter).count > 1
                || split(band, boxes, vertical: true, minimumGap: minimumGutter).count > 1
            {
                groups[groups.count - 1] = last + band
            } else {
                groups.append(band)
            }
        }
        return groups.flatMap { order($0, layout) }
    }

    /// The lines of columns `left` and `right` read row by row, when they make rows (`RowLayout.pairing`).
    private static func rows(_ left: [Int], _ right: [Int], _ layout: Layout) -> Part? {
        typealias Placed = (region: Int, line: Int, shape: LineShape)
        func lines(_ column: [Int]) -> [Placed] {
            column.flatMap { region in layout.lines[region].enumerated().map { (region, $0.offset, $0.element) } }
        }
        func byHeight(_ a: Placed, _ b: Placed) -> Bool { RowLayout.centre(a.shape.box) < RowLayout.centre(b.shape.box) }
        let leftLines = lines(left), rightLines = lines(right)
        guard let pairing = RowLayout.pairing(leftLines.map(\.shape), rightLines.map(\.shape)) else { return nil }
        switch pairing {
        case .aligned:
            let l = leftLines.sorted(by: byHeight), r = rightLines.sorted(by: byHeight)
            return zip(l, r).flatMap { [($0.region, $0.line), ($1.region, $1.line)] }
        case .alternating:
            return (leftLines + rightLines).sorted(by: byHeight).map { ($0.region, $0.line) }
        }
    }

    /// The items grouped by the gaps in their projection on x (`vertical`: gaps are vertical strips) or on y,
    /// in increasing coordinate; one group when there is no gap of at least `minimumGap`.
    private static func split(_ items: [Int], _ boxes: [Rect], vertical: Bool, minimumGap: Int) -> [[Int]] {
        func start(_ i: Int) -> Int { vertical ? boxes[i].x : boxes[i].y }
        func end(_ i: Int) -> Int { vertical ? boxes[i].maxX : boxes[i].maxY }
        let sorted = items.enumerated().sorted { (start($0.element), $0.offset) < (start($1.element), $1.offset) }
        var groups: [[(offset: Int, element: Int)]] = []
        var reach = Int.min
        for item in sorted {
            if groups.isEmpty || start(item.element) - reach >= minimumGap {
                groups.append([item])
            } else {
                groups[groups.count - 1].append(item)
            }
            reach = max(reach, end(item.element))
        }
        // Within a group, keep the order the items came in.
        return groups.map { $0.sorted { $0.offset < $1.offset }.map(\.element) }
    }
}
