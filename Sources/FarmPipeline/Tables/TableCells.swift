import Leptonica

/// The cells of a table, found from the gaps in its ink: rows are the bands of pixel rows holding ink, and a row's
/// cells are its runs of ink separated by a gap wider than the row is high (a word gap is a fraction of the
/// letters' height, a column gap several times it). Works on ruled and unruled tables alike once the rules are
/// painted out; a cell that wraps over two lines is two cells, one per line.
///
/// Each cell is read on its own as one line: Tesseract's layout analysis splits a table into column fragments,
/// drops rows that touch a rule, and joins neighbouring cells into one word, while a line of a cell is the unit
/// its recognizer reads best (measured on pubtabnet-sample; see TesseractRecognizer+Tables.swift).
enum TableCells {
    /// A gap at least this many times the row's height separates two cells.
    static let gapHeights = 1.0
    /// Rows (bands of ink) thinner than this many pixels are specks or what is left of a rule.
    static let minimumRowHeight = 3
    /// A pixel row with this share of its pixels dark is part of a rule.
    static let ruleShare = 0.5
    /// Gray level below which a pixel is ink for finding cells: light, because small text enlarged is blurred
    /// and its thin strokes come out light gray (a darker limit opens gaps inside words).
    static let inkThreshold = 200

    /// The rows of `ink` (an 8-bit gray crop of the table; a pixel darker than `threshold` is ink), top to
    /// bottom, each with its cells left to right, in the crop's coordinates.
    static func cells(_ ink: GrayPixels, threshold: Int = inkThreshold) -> [[Box]] {
        let dark = UInt8(clamping: threshold)
        // A pixel row mostly dark is a rule left in the image (too light or too tilted to be painted out): it
        // separates rows rather than belonging to one.
        var rowHasInk = [Bool](repeating: false, count: ink.height)
        for y in 0..<ink.height {
            let start = y * ink.width
            var count = 0
            for x in 0..<ink.width where ink.data[start + x] < dark { count += 1 }
            rowHasInk[y] = count > 0 && Double(count) < ruleShare * Double(ink.width)
        }
        var rows: [[Box]] = []
        for band in runs(rowHasInk) where band.count >= minimumRowHeight {
            var columnHasInk = [Bool](repeating: false, count: ink.width)
            for y in band {
                let start = y * ink.width
                for x in 0..<ink.width where ink.data[start + x] < dark { columnHasInk[x] = true }
            }
            let gap = max(2, Int(gapHeights * Double(band.count)))
            var cells: [Range<Int>] = []
            for piece in runs(columnHasInk) {
                if let last = cells.last, piece.lowerBound - last.upperBound < gap {
                    cells[cells.count - 1] = last.lowerBound..<piece.upperBound
                } else {
                    cells.append(piece)
                }
            }
            rows.append(cells.map { Box(x: $0.lowerBound, y: band.lowerBound, width: $0.count, height: band.count) })
        }
        return rows
    }

    /// At least this share of a table's rows have two cells or more: nearly all do (pubtabnet-sample crops: 0.8 to
    /// 1), while the lines of a receipt or a form are split about half the time (sroie: 0.5 to 0.8), and those
    /// pages read no better as tables.
    static let multiCellShare = 0.8
    /// A table's cells are narrow: the median cell is at most this share of the region's width (a line of prose
    /// in a column of a two-column paper is about 0.4 of the page, a table's cell a few hundredths).
    static let narrowCellShare = 0.25

    /// Whether `rows` (from `cells(_:)`, in a region `width` pixels wide) are laid out as a table rather than as
    /// lines of prose: two rows or more, most of them split in cells, and the cells narrow.
    static func looksTabular(_ rows: [[Box]], width: Int) -> Bool {
        guard rows.count >= 2, width > 0 else { return false }
        let split = rows.filter { $0.count >= 2 }.count
        guard Double(split) >= multiCellShare * Double(rows.count) else { return false }
        let widths = rows.flatMap { $0.map(\.width) }.sorted()
        return Double(widths[widths.count / 2]) <= narrowCellShare * Double(width)
    }

    /// The runs of `true` in `flags`.
    static func runs(_ flags: [Bool]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start: Int?
        for (index, flag) in flags.enumerated() {
            if flag, start == nil { start = index }
            if !flag, let first = start { result.append(first..<index); start = nil }
        }
        if let first = start { result.append(first..<flags.count) }
        return result
    }
}
