import FarmCore
import Leptonica

/// Ruling lines (a table's rules and frames, underlines, boxes around fields) found, painted out of the page that
/// is read, and the tables they frame. Tesseract's layout analysis takes a ruled table for a picture, or joins a
/// rule to the digits that touch it, and drops the cells' numbers; without the rules it finds the cells' words.
///
/// A rule is a straight run of ink far longer than any glyph stroke and thin across: Leptonica's brick opening
/// with a long bar keeps only such runs.
enum TableRulings {
    /// The shortest run taken for a rule, as a fraction of the page's shorter side, and never under `minimumLength`
    /// pixels nor `xHeights` times the body text's x-height (bold letters, enlarged and blurred, touch one another
    /// and make runs a few x-heights long).
    static let lengthFraction = 1.0 / 30
    static let minimumLength = 20
    static let xHeights = 5.0
    /// A table's rules span at least this share of the page's width (a column's table in a two-column paper does).
    static let tableRuleShare = 0.25
    /// A single rule this wide (of the page's width) is a table's on its own.
    static let wideRuleShare = 0.8

    /// `image` with the ruling lines inside its tables painted out (the same image when it has no table), the
    /// tables, and how many pixels of rules the page has (0 when it has no table).
    static func removed(from image: Pix) throws(LeptonicaError) -> (image: Pix, tables: [Box], pixels: Int) {
        // A first look with the page's own length limit: most pages have no long rule, and they are done without
        // measuring their text (what costs most here).
        let pageLength = max(minimumLength, Int(Double(min(image.width, image.height)) * lengthFraction))
        // Its thickness limit is loose (an enlarged page's rules are thick): this look only decides whether to go on.
        var light = try image.rulingLines(length: pageLength, thickness: max(3, min(image.width, image.height) / 10),
                                          threshold: ruleThreshold)
        guard !tables(light.horizontal, width: image.width, height: image.height).isEmpty else { return (image, [], 0) }
        let xHeight = try TextSize.estimate(image)?.xHeight ?? 0
        let length = max(pageLength, Int(xHeights * xHeight))
        let thickness = max(3, length / 4)
        // Tables are found by their rules drawn in light gray too; only the darker rules are painted out (the
        // light ones do not disturb the layout analysis, and whitening them takes the anti-aliased edges of
        // glyphs that touch them), and only inside tables: elsewhere a long line is a fraction bar, an underline
        // or a diagram's box, and the page reads better with it (measured on docbank-sample).
        light = try image.rulingLines(length: length, thickness: thickness, threshold: ruleThreshold)
        let ruled = tables(light.horizontal, width: image.width, height: image.height)
        guard !ruled.isEmpty else { return (image, [], 0) }
        let lines = try image.rulingLines(length: length, thickness: thickness, threshold: inkThreshold)
        let ink = try image.grayPixels()
        let gap = max(8, Int(4 * xHeight))
        let found = ruled.map { extendedDown($0, ink, gap: gap) }
        // Rules too light to paint out leave nothing to tell a chart by (its light frame is in the way): kept.
        guard lines.pixels > 0 else { return (image, found, 0) }
        let cleaned = try image.whitened(through: lines.mask, within: found)
        // A chart's frame is ruled too: a table holds text, a chart curves and bars (ink in pieces far taller than
        // a line of text). A chart is read as the page reads it, with its frame.
        var tables: [Box] = []
        for table in found where try holdsText(table, in: cleaned, xHeight: xHeight) { tables.append(table) }
        guard !tables.isEmpty else { return (image, [], lines.pixels) }
        return (tables.count == found.count ? cleaned : try image.whitened(through: lines.mask, within: tables), tables,
                lines.pixels)
    }

    /// Pieces of ink taller than this many x-heights are not text.
    static let textHeights = 3.0
    /// A table may have this share of its area under pieces that are not text (a logo, a rule left over).
    static let otherShare = 0.1

    /// Whether `region` of `image` (its rules painted out) holds text alone: its pieces of ink are glyph-sized.
    static func holdsText(_ region: Box, in image: Pix, xHeight: Double) throws(LeptonicaError) -> Bool {
        let tallest = max(12, Int(textHeights * xHeight))
        let pieces = try image.cropped(to: region).binarized(threshold: inkThreshold).componentBoxes(grownBy: 1, 1)
        let other = pieces.filter { $0.height > tallest }.reduce(0) { $0 + $1.width * $1.height }
        return Double(other) <= otherShare * Double(region.width * region.height)
    }

    /// Gray level below which a pixel can be part of a rule: rules are often printed light gray, and only long
    /// straight runs count, so a light threshold takes no text.
    static let ruleThreshold = 215
    /// Gray level below which a pixel of a rule is painted out.
    static let inkThreshold = 160

    /// `table` extended down over the rows of ink that follow its last rule with no blank band of `gap` rows or more
    /// (a table whose body has no bottom rule, or only a header ruled).
    static func extendedDown(_ table: Box, _ ink: GrayPixels, gap: Int) -> Box {
        var bottom = table.y + table.height, blank = 0, y = bottom
        let x0 = max(0, table.x), x1 = min(ink.width, table.x + table.width)
        while y < ink.height && blank < gap {
            var dark = false
            for x in x0..<x1 where ink[x, y] < 128 { dark = true; break }
            if dark { blank = 0; bottom = y + 1 } else { blank += 1 }
            y += 1
        }
        return Box(x: table.x, y: table.y, width: table.width, height: bottom - table.y)
    }

    /// The tables framed by `rules`: two or more long horizontal rules, one above the other and spanning much the
    /// same columns (a top rule, a header rule, a bottom rule), make one table from the first to the last; so does
    /// one rule spanning most of the page (a table cut out of a page, with its header ruled).
    static func tables(_ rules: [Box], width: Int, height: Int) -> [Box] {
        let long = rules.filter { Double($0.width) >= tableRuleShare * Double(width) }.sorted { $0.y < $1.y }
        var groups: [[Box]] = []
        for rule in long {
            if let index = groups.firstIndex(where: { group in group.contains { sameColumns($0, rule) } }) {
                groups[index].append(rule)
            } else {
                groups.append([rule])
            }
        }
        return groups.filter { $0.count >= 2 || Double($0[0].width) >= wideRuleShare * Double(width) }.map { group in
            let x0 = group.map(\.x).min()!, x1 = group.map { $0.x + $0.width }.max()!
            let y0 = group.map(\.y).min()!, y1 = group.map { $0.y + $0.height }.max()!
            return Box(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        }.filter { $0.height > 0 && $0.width > 0 }
    }

    /// Two rules span much the same columns: each covers at least half of the other.
    static func sameColumns(_ a: Box, _ b: Box) -> Bool {
        let overlap = min(a.x + a.width, b.x + b.width) - max(a.x, b.x)
        return overlap * 2 >= min(a.width, b.width)
    }
}
