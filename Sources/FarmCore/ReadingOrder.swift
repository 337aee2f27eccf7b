/// The order a person reads the text regions of a page in, from their boxes alone: columns left to right, each
/// top to bottom, with full-width regions (titles, footers, a paragraph across both columns) in between.
///
/// A recursive XY cut that prefers columns. A group of regions is first cut at vertical gutters (a strip of
/// the page no region crosses, any gap between paragraphs will do, as ragged lines leave narrow gutters) into columns, read left to right. When no gutter
/// runs through the whole group, it is cut at horizontal gaps into bands, and adjacent bands are merged as long
/// as their union still has a gutter, so that two columns whose paragraph breaks happen to line up stay two
/// columns rather than being read across. Regions that overlap both ways keep the engine's order.
public enum ReadingOrder {
    /// The indices of `boxes` in reading order. Specks (regions smaller than two `lineHeight`s both ways: a stray
    /// mark, a bullet, a page number) take no part in finding columns, since one speck in a margin would make a
    /// column of its own; they come last, in the order given.
    public static func order(_ boxes: [Rect], lineHeight: Int) -> [Int] {
        let line = max(1, lineHeight)
        let isSpeck = boxes.map { $0.width < 2 * line && $0.height < 2 * line }
        let regions = boxes.indices.filter { !isSpeck[$0] }
        return order(regions, boxes, minimumGutter: max(2, line / 8)) + boxes.indices.filter { isSpeck[$0] }
    }

    private static func order(_ items: [Int], _ boxes: [Rect], minimumGutter: Int) -> [Int] {
        guard items.count > 1 else { return items }
        let columns = split(items, boxes, vertical: true, minimumGap: minimumGutter)
        if columns.count > 1 {
            return columns.flatMap { order($0, boxes, minimumGutter: minimumGutter) }
        }
        let bands = split(items, boxes, vertical: false, minimumGap: 1)
        guard bands.count > 1 else { return items }
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
        return groups.flatMap { order($0, boxes, minimumGutter: minimumGutter) }
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
