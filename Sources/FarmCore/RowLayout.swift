/// Two columns side by side that are one table of rows, not two columns of text: a receipt's item names beside
/// their prices, a form's labels beside their values. Columns are read one after the other, which is right for
/// newspaper and paper columns and wrong for rows, where each left piece belongs with the right piece of its row
/// (SROIE 330: "The recipient / required to mat" beside "Gardenia's products is / necessary adjustments to its";
/// SROIE 570: each item name, then its quantity and price half a row lower).
///
/// The page's own layout decides, not the kind of document: the two columns' lines pair up one to one, either at
/// the same heights (aligned rows) or strictly taking turns with no two overlapping in height (each piece on a row
/// of its own: one side's lines spaced so that the other's fit between them, which lines of prose never are); and
/// one side holds short pieces, at most `cellWords` words on every line. Prose columns hold more words a line.
/// At least two rows (three lines taking turns): one line beside one line (two columns' headings at the same
/// height) is no evidence of rows.
public enum RowLayout {
    /// The most words on every line of one side of a row layout: a label, a price, a quantity with its unit.
    /// A line of prose, even in a narrow newspaper column, holds more.
    public static let cellWords = 3

    /// How two columns' lines make rows.
    public enum Pairing: Sendable, Equatable {
        /// The i-th line of the left column (top down) is at the height of the i-th of the right one, and of no other.
        case aligned
        /// The lines take turns from top to bottom, one row each, no two overlapping in height.
        case alternating
    }

    /// How the lines of a `left` column and a `right` one (wholly to its right) make rows; nil when they are columns.
    public static func pairing(_ left: [ReadingOrder.LineShape], _ right: [ReadingOrder.LineShape]) -> Pairing? {
        guard !left.isEmpty, !right.isEmpty else { return nil }
        guard isShort(left) || isShort(right) else { return nil }
        let l = left.sorted { centre($0.box) < centre($1.box) }, r = right.sorted { centre($0.box) < centre($1.box) }
        if l.count == r.count, l.count >= 2,
           zip(l, r).allSatisfy({ sameHeight($0.box, $1.box) }),
           !zip(l.dropFirst(), r).contains(where: { sameHeight($0.box, $1.box) }),
           !zip(l, r.dropFirst()).contains(where: { sameHeight($0.box, $1.box) })
        {
            return .aligned
        }
        guard abs(l.count - r.count) <= 1, l.count + r.count >= 3 else { return nil }
        let merged = (l.map { (box: $0.box, isLeft: true) } + r.map { (box: $0.box, isLeft: false) })
            .sorted { centre($0.box) < centre($1.box) }
        let takeTurns = zip(merged, merged.dropFirst()).allSatisfy { upper, lower in
            upper.isLeft != lower.isLeft && upper.box.maxY <= lower.box.y
        }
        return takeTurns ? .alternating : nil
    }

    /// Whether every line holds at most `cellWords` words.
    static func isShort(_ lines: [ReadingOrder.LineShape]) -> Bool {
        lines.allSatisfy { $0.words <= cellWords }
    }

    /// Twice the height of a box's centre (an integer that orders boxes as their centres do).
    public static func centre(_ box: Rect) -> Int { 2 * box.y + box.height }

    /// Whether two boxes are at the same height: they overlap in height by at least half the lower one's height.
    public static func sameHeight(_ a: Rect, _ b: Rect) -> Bool {
        let overlap = min(a.maxY, b.maxY) - max(a.y, b.y)
        return overlap > 0 && 2 * overlap >= min(a.height, b.height)
    }
}
