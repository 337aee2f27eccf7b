import FarmCore

/// Lines into blocks: the detector gives lines without layout, so lines stacked on one another (overlapping
/// across, close in height, with similar heights) are joined into a block of one paragraph. Columns, rows and
/// reading order are then ocrfarm's own (`PageResult.arrangeInReadingOrder`).
enum LineLayout {
    /// The widest gap between stacked lines of one block, in line heights (the smaller of the two).
    static let maxGap = 0.8
    /// Two lines overlap across by at least this fraction of the narrower one to be stacked.
    static let minOverlap = 0.3
    /// Lines in one block differ in height by at most this factor.
    static let maxHeightRatio = 1.8

    /// Pieces of a row closer than this many line heights are one line the detector split at a wide space.
    static let maxWordGap = 1.0
    /// How far the next piece of a row may start left of where a piece ends, in line heights. The detector grows
    /// each region by its unclip distance (area × 1.6 / perimeter: up to 0.8 of the shrunk region's height on each
    /// side), so the boxes of two pieces a narrow space apart overlap by up to about 0.6 of their height (a receipt's
    /// quantity "2X" and its unit price "5.30": 24 px of 47). At half a height such a neighbour was passed over, the
    /// row joined to the piece after it, and the neighbour left a line of its own, read after the table.
    static let maxRowOverlap = 1.0
    /// A row's piece of at most this many words (a label, a price) joins its neighbour across any gap
    /// (`RowLayout.cellWords`), unless the gap is a column gutter.
    static let cellWords = RowLayout.cellWords
    /// A gap is a column gutter when no other line crosses it within this many line heights above or below.
    static let gutterReach = 12.0

    /// The detector's pieces of one row joined into lines, as Tesseract reads a receipt's row ("Date:" and
    /// "13/01/2018", an item and its price): neighbours on one row (overlapping in height by at least 60% of the
    /// lower one, heights within 1.5×) are joined when the gap between them is under `maxWordGap` line heights,
    /// or when one of them is a short cell and either one is a number (a price, a quantity, an equation's number) or
    /// the gap is no gutter between two columns of text, whose lines are read one column after the other: some
    /// other line nearby crosses it, and neither piece is a line of a column of prose.
    /// Joining runs again while it joins more: rows joined in one pass (a table's numbers) cross the gaps of
    /// the next (its heading's cells).
    static func joinedRows(_ lines: [Line]) -> [Line] {
        var lines = lines
        for _ in 0..<4 {
            let joined = joinedRowsOnce(lines)
            if joined.count == lines.count { break }
            lines = joined
        }
        return lines
    }

    static func joinedRowsOnce(_ lines: [Line]) -> [Line] {
        let order = lines.indices.sorted { lines[$0].box.x < lines[$1].box.x }
        var next = [Int?](repeating: nil, count: lines.count)
        var hasPrevious = [Bool](repeating: false, count: lines.count)
        for (position, i) in order.enumerated() {
            let a = lines[i].box
            // The nearest piece to the right on the same row.
            var nearest: Int?
            for j in order[(position + 1)...] where !hasPrevious[j] {
                let b = lines[j].box
                guard Double(b.x) >= Double(a.maxX) - maxRowOverlap * Double(min(a.height, b.height)) else { continue }
                let overlap = min(a.maxY, b.maxY) - max(a.y, b.y)
                let small = min(a.height, b.height), large = max(a.height, b.height)
                guard 10 * overlap >= 6 * small, 2 * large <= 3 * small else { continue }
                if nearest == nil || b.x < lines[nearest!].box.x { nearest = j }
            }
            guard let j = nearest else { continue }
            let b = lines[j].box
            let height = Double(min(a.height, b.height)), gap = Double(b.x - a.maxX)
            let isCell = min(lines[i].words.count, lines[j].words.count) <= cellWords
            let isGutter = isProse(i, lines) || isProse(j, lines)
                || !isCrossed(from: a.maxX, to: b.x, near: a.union(b), lines, height: height)
            guard gap <= maxWordGap * height || (isCell && (isNumber(lines[i]) || isNumber(lines[j]) || !isGutter)) else { continue }
            next[i] = j
            hasPrevious[j] = true
        }
        var joined: [Line] = []
        for i in lines.indices where !hasPrevious[i] {
            var line = lines[i]
            var cursor = next[i]
            while let j = cursor {
                line.words += lines[j].words
                line.box = line.box.union(lines[j].box)
                cursor = next[j]
            }
            joined.append(line)
        }
        return joined
    }

    /// A line of prose has at least this many words (a receipt's item lines have fewer).
    static let proseWords = 6

    /// Whether line `index` is a line of a column of prose: it has at least `proseWords` words, and so has a line
    /// within two line heights above or below it that starts or ends within half a line height of where it does.
    static func isProse(_ index: Int, _ lines: [Line]) -> Bool {
        let line = lines[index], box = line.box
        guard line.words.count >= proseWords else { return false }
        let slack = box.height / 2, reach = 2 * box.height
        return lines.indices.contains { other in
            let near = lines[other].box
            return other != index && lines[other].words.count >= proseWords
                && (abs(near.x - box.x) <= slack || abs(near.maxX - box.maxX) <= slack) && near.y <= box.maxY + reach && near.maxY >= box.y - reach
                && (near.maxY <= box.y || near.y >= box.maxY)
        }
    }

    /// Whether the line is mostly a number (a price with its currency and tax code, a quantity, a code): more
    /// digits than letters.
    static func isNumber(_ line: Line) -> Bool {
        let characters = line.words.flatMap(\.text)
        let digits = characters.filter(\.isNumber).count, letters = characters.filter(\.isLetter).count
        return digits > letters
    }

    /// Whether a line other than the row's own crosses the gap between x `start` and `end` within `gutterReach`
    /// line heights of the row `row`.
    static func isCrossed(from start: Int, to end: Int, near row: Rect, _ lines: [Line], height: Double) -> Bool {
        let reach = Int(gutterReach * height)
        return lines.contains { line in
            let box = line.box
            return box.x < start && box.maxX > end && box.maxY >= row.y - reach && box.y <= row.maxY + reach
                && !(box.y >= row.y && box.maxY <= row.maxY)
        }
    }

    /// The lines grouped into blocks, each block's lines top down; blocks in order of their first line.
    static func blocks(_ lines: [Line]) -> [Block] {
        let order = lines.indices.sorted { (RowLayout.centre(lines[$0].box), lines[$0].box.x) < (RowLayout.centre(lines[$1].box), lines[$1].box.x) }
        var parent = Array(lines.indices)
        func root(_ i: Int) -> Int {
            var i = i
            while parent[i] != i { parent[i] = parent[parent[i]]; i = parent[i] }
            return i
        }
        for (position, j) in order.enumerated() {
            let below = lines[j].box
            // The nearest line above that overlaps across: the one this line may continue.
            var nearest: Int?
            for i in order[..<position] {
                let above = lines[i].box
                guard above.maxY <= below.y + below.height / 2, overlapAcross(above, below) >= minOverlap else { continue }
                if nearest == nil || above.maxY > lines[nearest!].box.maxY { nearest = i }
            }
            guard let i = nearest else { continue }
            let above = lines[i].box
            let small = Double(min(above.height, below.height)), large = Double(max(above.height, below.height))
            guard large <= maxHeightRatio * small, Double(below.y - above.maxY) <= maxGap * small else { continue }
            parent[root(j)] = root(i)
        }
        var members: [Int: [Int]] = [:]
        for j in order { members[root(j), default: []].append(j) }
        var rank = [Int](repeating: 0, count: lines.count)
        for (position, j) in order.enumerated() { rank[j] = position }
        let groups = members.values.sorted { rank[$0[0]] < rank[$1[0]] }
        return groups.map { group in
            let blockLines = group.map { lines[$0] }
            let box = Rect.enclosing(blockLines.map(\.box))
            return Block(box: box, kind: "text", paragraphs: [Paragraph(box: box, lines: blockLines)])
        }
    }

    /// How much two boxes overlap across (in x), as a fraction of the narrower one's width.
    static func overlapAcross(_ a: Rect, _ b: Rect) -> Double {
        let overlap = min(a.maxX, b.maxX) - max(a.x, b.x)
        return overlap > 0 ? Double(overlap) / Double(max(1, min(a.width, b.width))) : 0
    }
}
